package io.datum.cdc;

import java.util.Objects;

/**
 * A table's schema-qualified name as PostgreSQL sent it in the Relation message (an empty namespace
 * there means {@code pg_catalog}; PostgreSQL docs, 55.9 Logical Replication Message Formats,
 * "Relation").
 *
 * @param schema the schema (namespace) name, not null
 * @param table the table name, not null
 */
public record TableId(String schema, String table) {

  /**
   * @throws NullPointerException if a part is null
   */
  public TableId {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(table, "table");
  }

  /** Returns {@code schema.table}, unquoted. */
  @Override
  public String toString() {
    return schema + '.' + table;
  }
}
