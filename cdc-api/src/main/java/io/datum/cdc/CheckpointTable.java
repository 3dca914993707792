package io.datum.cdc;

import java.util.Objects;

/**
 * The PostgreSQL table a {@link CdcCheckpointStore} writes its checkpoints into, with the identity
 * of the database it is in. A source whose slot decodes that same database leaves the table's
 * changes out: they are the store's own writes, one per stored acknowledgement, and delivering them
 * would make every acknowledgement produce a change to acknowledge (a publication {@code FOR ALL
 * TABLES} publishes the table too).
 *
 * @param systemIdentifier the cluster's {@code system_identifier} ({@code pg_control_system()}, the
 *     same number {@code IDENTIFY_SYSTEM} reports on a replication connection), as decimal text;
 *     null if the store cannot read it (then no source can prove the table is the store's, and its
 *     changes are delivered)
 * @param database the database's name ({@code current_database()}), not null
 * @param table the table, schema-qualified as the catalog names it, not null
 */
public record CheckpointTable(String systemIdentifier, String database, TableId table) {

  /**
   * @throws NullPointerException if the database or the table is null
   */
  public CheckpointTable {
    Objects.requireNonNull(database, "database");
    Objects.requireNonNull(table, "table");
  }
}
