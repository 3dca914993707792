/**
 * The {@code mapdb:} checkpoint store: every slot's checkpoint in MapDB files written in turn under
 * a checksummed selector ({@link io.datum.cdc.store.mapdb.MapDbCheckpointStore}).
 */
module io.datum.cdc.store.mapdb {
  requires transitive io.datum.cdc.api;
  requires static com.google.auto.service;
  requires mapdb;

  exports io.datum.cdc.store.mapdb;

  provides io.datum.cdc.CheckpointStoreProvider with
      io.datum.cdc.store.mapdb.internal.MapDbCheckpointStoreProvider;
}
