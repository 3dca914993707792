package io.datum.cdc.core.snapshot;

import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.RelationInfo;
import java.util.List;
import java.util.Objects;

/**
 * One table a publication publishes, as a snapshot reads it: named and described as the stream
 * names and describes it (the relation of its Relation message), with what a COPY of it needs.
 * Built by {@link SnapshotCatalog}; read by {@link CopyRows}.
 *
 * @param table the table as the stream names it: with {@code publish_via_partition_root} the
 *     partitioned root, else each leaf partition (PostgreSQL docs, CREATE PUBLICATION)
 * @param oid the table's oid ({@code pg_class.oid}), the relation id of its Relation message
 * @param relation the columns exactly as the stream's Relation message describes them (published
 *     columns only, in attnum order; key flags the replica identity's columns, all with REPLICA
 *     IDENTITY FULL), with the value type oids and codecs the stream's relation cache resolves
 * @param chunkKey the columns chunks are ordered and ranged by: the primary key's key columns in
 *     index order, else the replica identity index's, else empty (the table is then read whole, in
 *     no particular order); may name columns the publication's column list leaves out
 * @param chunkKeyTypes for each chunk key column its SQL type as {@code format_type} prints it
 *     (e.g. {@code timestamp with time zone}, {@code character varying(20)}), to cast range
 *     parameters with
 * @param rowFilter the publication's row filter for the table as {@code pg_get_expr} prints it
 *     (PostgreSQL 15+, {@code pg_publication_tables.rowfilter}), or null if none
 * @param partitionedRoot true for a partitioned table (relkind {@code p}), read with its
 *     partitions; false for a plain table, read with {@code FROM ONLY} (inheritance children are
 *     published and listed on their own)
 * @param relpages {@code pg_class.relpages}, summed over the leaves for a partitioned root: the
 *     planner's estimate of the table's size in blocks (0 if never vacuumed or analyzed)
 * @param reltuples {@code pg_class.reltuples}, summed over the leaves for a partitioned root
 *     (leaves never analyzed count as 0): the estimated row count; -1 for a plain table never
 *     vacuumed or analyzed (PostgreSQL 14+)
 */
public record SnapshotTable(
    TableId table,
    int oid,
    RelationInfo relation,
    List<String> chunkKey,
    List<String> chunkKeyTypes,
    String rowFilter,
    boolean partitionedRoot,
    long relpages,
    double reltuples) {

  /**
   * Checks the components and copies the lists.
   *
   * @throws IllegalArgumentException if the chunk key and its types differ in size
   */
  public SnapshotTable {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(relation, "relation");
    chunkKey = List.copyOf(chunkKey);
    chunkKeyTypes = List.copyOf(chunkKeyTypes);
    if (chunkKey.size() != chunkKeyTypes.size()) {
      throw new IllegalArgumentException(
          "table " + table + ": chunk key " + chunkKey + " and its types " + chunkKeyTypes);
    }
  }

  /** Returns true if the table has a chunk key, so that it can be read in key ranges. */
  public boolean hasChunkKey() {
    return !chunkKey.isEmpty();
  }
}
