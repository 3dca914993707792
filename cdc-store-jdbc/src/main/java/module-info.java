/**
 * The {@code jdbc:} checkpoint store: checkpoints in a table of the application's own database
 * ({@link io.datum.cdc.store.jdbc.JdbcCheckpointStore}), and acknowledgements committed in the
 * handler's own transaction ({@link io.datum.cdc.store.jdbc.TransactionalCheckpoints}).
 */
module io.datum.cdc.store.jdbc {
  requires transitive io.datum.cdc.api;
  requires transitive java.sql;
  requires static com.google.auto.service;

  exports io.datum.cdc.store.jdbc;

  provides io.datum.cdc.CheckpointStoreProvider with
      io.datum.cdc.store.jdbc.provider.JdbcCheckpointStoreProvider;
}
