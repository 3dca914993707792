package io.datum.cdc.core.pgoutput;

import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBinaryTypes;
import io.datum.cdc.core.types.PgBinaryValues;
import io.datum.cdc.core.types.PgBuiltinType;
import io.datum.cdc.event.ColumnInfo;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the Relation and Type messages of one replication connection said: each relation's columns
 * and replica identity, and the namespace and name of each non-builtin column type (pgoutput sends
 * a Type message before the first Relation message that uses the type; {@code
 * logicalrep_write_typ}, src/backend/replication/logical/proto.c). Changes are decoded against the
 * relation as its last Relation message described it. Used by one decoder's thread only.
 *
 * <p>Public (in this unexported package) so that the snapshot reader ({@code
 * io.datum.cdc.core.snapshot.SnapshotCatalog}) resolves a table's columns exactly as a Relation
 * message for it would be resolved here: it feeds the Type messages pgoutput would send and the
 * Relation it would send through {@link #addType}, {@link #valueType} and {@link #add}.
 */
public final class RelationCache {

  /** Codecs of column types the builtin decoders do not decode; null: such values stay text. */
  private final PgBinaryTypes binaryTypes;

  /** Each entry a one-element array, handed out as is to deferred changes. */
  private final Map<Integer, RelationInfo[]> relations = new HashMap<>();

  /** Type oid to {namespace, name}, from Type messages. */
  private final Map<Integer, String[]> types = new HashMap<>();

  /**
   * @param binaryTypes where codecs of non-builtin column types come from (binary values, and
   *     arrays of user types in text mode), or null to keep every such text value as its text
   */
  public RelationCache(PgBinaryTypes binaryTypes) {
    this.binaryTypes = binaryTypes;
  }

  /**
   * Returns the cache entry of a relation: a one-element array holding its latest description.
   *
   * @param oid the relation oid
   * @return the entry, or null if no Relation message for it was received
   */
  RelationInfo[] get(int oid) {
    return relations.get(oid);
  }

  /**
   * Caches a relation from a Relation message, after resolving the codecs of its columns whose
   * values the builtin decoders ({@link PgBinaryValues}, and the text ones alike) cannot decode
   * (once per Relation message, with at most one catalog query for types not seen before).
   *
   * @param relation the relation as the message describes it
   * @return the relation as cached (with its codecs)
   * @throws RuntimeException if the type catalog cannot be asked
   */
  public RelationInfo add(RelationInfo relation) {
    RelationInfo cached = binaryTypes == null ? relation : withBinaryCodecs(relation);
    relations.put(cached.oid(), new RelationInfo[] {cached});
    return cached;
  }

  /**
   * Records a Type message.
   *
   * @param oid the type oid
   * @param namespace its namespace ({@code pg_catalog} for an empty one)
   * @param name its name; a domain comes under its base type's name
   */
  public void addType(int oid, String namespace, String name) {
    types.put(oid, new String[] {namespace, name});
  }

  /**
   * Maps a column type oid to the builtin type whose decoders apply: a domain over a builtin type
   * arrives with its own oid and a Type message naming its innermost base type in {@code
   * pg_catalog} ({@link PgBuiltinType#builtinOidNamed}), so its values decode from the stream
   * alone, whether or not the catalog still holds the domain.
   *
   * @param typeOid the column's type oid
   * @return the builtin oid to decode its values as, or {@code typeOid} itself
   */
  public int valueType(int typeOid) {
    String[] sent = types.get(typeOid);
    if (sent != null && !PgBuiltinType.decodesText(typeOid) && "pg_catalog".equals(sent[0])) {
      int builtin = PgBuiltinType.builtinOidNamed(sent[1]);
      if (builtin != 0) {
        return builtin;
      }
    }
    return typeOid;
  }

  private RelationInfo withBinaryCodecs(RelationInfo relation) {
    List<ColumnInfo> columns = relation.columns();
    int[] valueTypes = relation.valueTypeOids();
    int[] needed = new int[columns.size()];
    int n = 0;
    for (int i = 0; i < needed.length; i++) {
      if (!PgBinaryValues.supports(valueTypes[i])) {
        needed[n++] = valueTypes[i];
      }
    }
    if (n == 0) {
      return relation;
    }
    PgBinaryCodec[] codecs = new PgBinaryCodec[columns.size()];
    binaryTypes.prepare(Arrays.copyOf(needed, n));
    for (int i = 0; i < codecs.length; i++) {
      if (!PgBinaryValues.supports(valueTypes[i])) {
        int oid = columns.get(i).typeOid();
        String[] sent = types.get(oid);
        codecs[i] =
            valueTypes[i] != oid
                ? binaryTypes.codec(valueTypes[i]) // a domain over a builtin range
                : sent == null ? binaryTypes.codec(oid) : binaryTypes.codec(oid, sent[0], sent[1]);
      }
    }
    return relation.withBinaryCodecs(codecs);
  }
}
