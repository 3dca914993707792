package io.datum.cdc.event;

import java.util.Objects;

/**
 * One column of a relation as the Relation message described it (PostgreSQL docs, 55.9 Logical
 * Replication Message Formats, "Relation").
 *
 * @param name the column name, not null
 * @param typeOid the OID of the column's data type (a domain is sent as its base type)
 * @param typeModifier the type modifier ({@code atttypmod}), -1 when none
 * @param key true if the column is part of the table's replica identity
 */
public record ColumnInfo(String name, int typeOid, int typeModifier, boolean key) {

  /**
   * @throws NullPointerException if {@code name} is null
   */
  public ColumnInfo {
    Objects.requireNonNull(name, "name");
  }
}
