package io.datum.cdc.core.types;

import io.datum.cdc.event.PgType;
import java.util.List;
import java.util.Map;

/**
 * Where {@code PgOutputDecoder} (through its relation cache) gets the descriptions of column types
 * and columns the events carry ({@link #describe}, {@link #columnFacts}), and the codecs of column
 * types its builtin decoders ({@link PgBinaryValues}, {@link PgTextValues}) do not handle, for
 * binary values and for text values alike ({@link PgBinaryCodec#textValue}): user-defined types
 * (enums, domains, composites, ranges, multiranges, their arrays) and the builtin ranges and
 * multiranges. The type kinds are not in the pgoutput stream (the Type message carries only a
 * namespace and a name), so an implementation asks the catalog; {@link PgTypeCatalog} is the one
 * the source uses. Called at Relation time on the replication thread, never per row.
 */
public interface PgBinaryTypes {

  /**
   * Resolves the codecs of these type oids, with at most one catalog round trip for those not known
   * yet.
   *
   * @param typeOids type oids of a relation's columns that {@link PgBinaryValues} does not handle
   * @throws RuntimeException if the catalog cannot be queried
   */
  void prepare(int[] typeOids);

  /**
   * Returns the codec of a type oid, resolving it first if needed.
   *
   * @param typeOid a type oid
   * @return the codec; one that fails on every value, naming the type and the reason, for a type
   *     whose binary format is unknown or that no longer exists
   */
  PgBinaryCodec codec(int typeOid);

  /**
   * Returns the codec of a column type oid, with what the stream's Type message said of it for a
   * type the catalog does not hold (a type dropped before the catalog was asked). By default {@link
   * #codec(int)}.
   *
   * @param typeOid a type oid
   * @param sentNamespace the namespace the Type message gave, or null if none was received
   * @param sentName the name the Type message gave (a domain under its base type's), or null
   * @return the codec, as {@link #codec(int)}
   */
  default PgBinaryCodec codec(int typeOid, String sentNamespace, String sentName) {
    return codec(typeOid);
  }

  /**
   * Describes a column type for the column's {@link io.datum.cdc.event.ColumnInfo#type()}: a
   * builtin type from {@link PgType#builtin}, any other from the catalog, resolving it first if
   * needed (call {@link #prepare} first to resolve several in one round trip). By default the
   * builtin table only.
   *
   * @param typeOid a type oid
   * @param sentNamespace the namespace a Type message gave, or null if none was received
   * @param sentName the name a Type message gave (a domain under its base type's), or null
   * @return the type; {@link PgType.Kind#UNKNOWN}, named as the Type message named it, for a type
   *     the catalog does not hold
   * @throws RuntimeException if the catalog cannot be queried
   */
  default PgType describe(int typeOid, String sentNamespace, String sentName) {
    PgType builtin = PgType.builtin(typeOid);
    if (builtin.kind() != PgType.Kind.UNKNOWN || sentName == null) {
      return builtin;
    }
    return PgType.unknown(typeOid, sentNamespace, sentName);
  }

  /**
   * Returns the facts of a relation's columns that are not in the Relation message: the declared
   * array dimensions ({@code pg_attribute.attndims}) and the position in the primary key, by column
   * name. Asked once per Relation message whose columns differ from the relation's last ones, never
   * per row. By default unknown.
   *
   * @param relationOid the relation oid
   * @param columns the names of the columns the message lists
   * @param refresh true to ask the catalog again although it answered for the relation before (its
   *     columns changed)
   * @return column name to {@code {attndims, primary key position from 1 or 0}}; null if unknown
   * @throws RuntimeException if the catalog cannot be queried
   */
  default Map<String, int[]> columnFacts(int relationOid, List<String> columns, boolean refresh) {
    return null;
  }
}
