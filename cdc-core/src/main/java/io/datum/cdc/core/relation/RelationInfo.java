package io.datum.cdc.core.relation;

import io.datum.cdc.TableId;
import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBinaryValues;
import io.datum.cdc.core.types.PgTextValues;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.event.ColumnInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A table as the last Relation message ({@code 'R'}) described it (PostgreSQL docs, 55.9 Logical
 * Replication Message Formats, "Relation"; src/backend/replication/logical/proto.c, {@code
 * logicalrep_write_rel}). With REPLICA IDENTITY FULL every column is flagged as key.
 *
 * <p>The arrays are owned by this record and must not be modified by callers (a record cannot hide
 * them without a copy per row).
 *
 * @param oid the relation's oid, the identifier later messages use
 * @param table schema and name; an empty namespace in the message is {@code pg_catalog}
 * @param replicaIdentity {@code 'd'} default (primary key), {@code 'n'} nothing, {@code 'f'} full,
 *     {@code 'i'} index
 * @param columns the published columns in order; unmodifiable, shared by every Row of the relation
 * @param keyColumns the replica-identity columns in order; unmodifiable, shared by every key Row
 * @param keyIndexes for each key column, its position in {@code columns}
 * @param valueTypeOids for each column, the oid of the builtin type whose text decoder applies (the
 *     column's own oid, or a domain's base type; see {@link PgTextValues#decode(int, String)})
 * @param binaryCodecs null, or per column the codec of a type that {@link PgBinaryValues} and
 *     {@link PgTextValues} do not decode (null entries for the others), resolved from the catalog
 *     at Relation time (see {@link PgTypeCatalog}); it decodes the column's binary ({@code 'b'})
 *     and text ({@code 't'}) values alike
 */
public record RelationInfo(
    int oid,
    TableId table,
    char replicaIdentity,
    List<ColumnInfo> columns,
    List<ColumnInfo> keyColumns,
    int[] keyIndexes,
    int[] valueTypeOids,
    PgBinaryCodec[] binaryCodecs) {

  /**
   * Validates the components and makes the lists unmodifiable.
   *
   * @throws IllegalArgumentException if the replica identity is unknown or the sizes disagree
   */
  public RelationInfo {
    Objects.requireNonNull(table, "table");
    if ("dnfi".indexOf(replicaIdentity) < 0) {
      throw new IllegalArgumentException("unknown replica identity '" + replicaIdentity + "'");
    }
    columns = List.copyOf(columns);
    keyColumns = List.copyOf(keyColumns);
    if (keyColumns.size() != keyIndexes.length
        || columns.size() != valueTypeOids.length
        || (binaryCodecs != null && binaryCodecs.length != columns.size())) {
      throw new IllegalArgumentException("relation " + table + ": inconsistent column arrays");
    }
  }

  /**
   * Creates a relation without binary codecs.
   *
   * @param oid the relation oid
   * @param table the table name
   * @param replicaIdentity one of {@code d n f i}
   * @param columns the columns in order
   * @param keyColumns the key columns in order
   * @param keyIndexes the key columns' positions
   * @param valueTypeOids the decoder type oid per column
   */
  public RelationInfo(
      int oid,
      TableId table,
      char replicaIdentity,
      List<ColumnInfo> columns,
      List<ColumnInfo> keyColumns,
      int[] keyIndexes,
      int[] valueTypeOids) {
    this(oid, table, replicaIdentity, columns, keyColumns, keyIndexes, valueTypeOids, null);
  }

  /**
   * Returns this relation with binary codecs for its columns.
   *
   * @param codecs per column a codec or null (see the record description); owned by the result
   * @return the relation
   */
  RelationInfo withBinaryCodecs(PgBinaryCodec[] codecs) {
    return new RelationInfo(
        oid, table, replicaIdentity, columns, keyColumns, keyIndexes, valueTypeOids, codecs);
  }

  /**
   * Builds a relation, deriving the key columns from the columns' key flags.
   *
   * @param oid the relation oid
   * @param table the table name
   * @param replicaIdentity one of {@code d n f i}
   * @param columns the columns in order
   * @param valueTypeOids the decoder type oid per column (see the record description)
   * @return the relation
   */
  public static RelationInfo of(
      int oid, TableId table, char replicaIdentity, List<ColumnInfo> columns, int[] valueTypeOids) {
    List<ColumnInfo> keys = new ArrayList<>();
    int[] keyIndexes = new int[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).key()) {
        keyIndexes[keys.size()] = i;
        keys.add(columns.get(i));
      }
    }
    return new RelationInfo(
        oid,
        table,
        replicaIdentity,
        columns,
        keys,
        Arrays.copyOf(keyIndexes, keys.size()),
        valueTypeOids.clone());
  }

  /**
   * Builds a relation whose columns are decoded by their declared type oids.
   *
   * @param oid the relation oid
   * @param table the table name
   * @param replicaIdentity one of {@code d n f i}
   * @param columns the columns in order
   * @return the relation
   */
  public static RelationInfo of(
      int oid, TableId table, char replicaIdentity, List<ColumnInfo> columns) {
    int[] types = new int[columns.size()];
    for (int i = 0; i < types.length; i++) {
      types[i] = columns.get(i).typeOid();
    }
    return of(oid, table, replicaIdentity, columns, types);
  }

  /** Returns true if the relation has at least one replica-identity column. */
  public boolean hasKey() {
    return !keyColumns.isEmpty();
  }

  /** Returns {@code schema.table (oid N)}, for messages. */
  public String describe() {
    return table + " (oid " + Integer.toUnsignedString(oid) + ")";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RelationInfo
        && ((RelationInfo) o).oid == oid
        && ((RelationInfo) o).replicaIdentity == replicaIdentity
        && ((RelationInfo) o).table.equals(table)
        && ((RelationInfo) o).columns.equals(columns)
        && Arrays.equals(((RelationInfo) o).valueTypeOids, valueTypeOids);
  }

  @Override
  public int hashCode() {
    return Objects.hash(oid, table, replicaIdentity, columns);
  }

  @Override
  public String toString() {
    return "RelationInfo[" + describe() + ", identity " + replicaIdentity + ", " + columns + "]";
  }
}
