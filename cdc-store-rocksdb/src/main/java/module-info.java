/**
 * The {@code rocksdb:} checkpoint store: every slot's checkpoint in one RocksDB database, the
 * write-ahead log fsynced per batch ({@link io.datum.cdc.store.rocksdb.RocksDbCheckpointStore}).
 */
module io.datum.cdc.store.rocksdb {
  requires transitive io.datum.cdc.api;
  requires static com.google.auto.service;
  requires rocksdbjni;

  exports io.datum.cdc.store.rocksdb;

  provides io.datum.cdc.CheckpointStoreProvider with
      io.datum.cdc.store.rocksdb.internal.RocksDbCheckpointStoreProvider;
}
