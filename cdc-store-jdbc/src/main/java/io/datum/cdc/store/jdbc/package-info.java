/**
 * Checkpoints in a table of the application's PostgreSQL database, through its JDBC driver and
 * {@code DataSource} (this version refuses other databases; {@link
 * io.datum.cdc.store.jdbc.JdbcCheckpointStore}, URI {@code
 * jdbc:postgresql://host/db?user=app#table=cdc_checkpoint}), and exactly-once processing by
 * acknowledging in the handler's own transaction ({@link
 * io.datum.cdc.store.jdbc.TransactionalCheckpoints}).
 */
package io.datum.cdc.store.jdbc;
