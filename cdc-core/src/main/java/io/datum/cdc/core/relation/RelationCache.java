package io.datum.cdc.core.relation;

import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBinaryTypes;
import io.datum.cdc.core.types.PgBinaryValues;
import io.datum.cdc.core.types.PgBuiltinType;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.PgType;
import java.util.ArrayList;
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
  public RelationInfo[] get(int oid) {
    return relations.get(oid);
  }

  /**
   * Caches a relation from a Relation message, after describing its columns ({@link
   * ColumnInfo#type()}, {@link ColumnInfo#arrayDimensions()}, {@link
   * ColumnInfo#primaryKeyPosition()}) and resolving the codecs of its columns whose values the
   * builtin decoders ({@link PgBinaryValues}, and the text ones alike) cannot decode. Once per
   * Relation message, never per row: at most one catalog query for types not seen before, and one
   * for the column facts of a relation the catalog has not read or whose columns changed; a message
   * that sends the relation's last columns again gets the last column list itself.
   *
   * @param relation the relation as the message describes it
   * @return the relation as cached (with described columns and its codecs)
   * @throws RuntimeException if the type catalog cannot be asked
   */
  public RelationInfo add(RelationInfo relation) {
    RelationInfo[] previous = relations.get(relation.oid());
    if (previous != null && sameAsSent(previous[0].columns(), relation.columns())) {
      // the same list: consumers' caches by identity still hit
      return store(relation, previous[0].columns(), null);
    }
    Map<String, int[]> facts = null;
    if (binaryTypes != null) {
      List<String> names = new ArrayList<>(relation.columns().size());
      relation.columns().forEach(c -> names.add(c.name()));
      facts = binaryTypes.columnFacts(relation.oid(), names, previous != null);
    }
    return store(relation, null, facts);
  }

  /**
   * Caches a relation whose column facts the caller read itself (a snapshot, inside its exported
   * snapshot), describing its column types as {@link #add(RelationInfo)} does.
   *
   * @param relation the relation as a Relation message would describe it
   * @param facts column name to {@code {attndims, primary key position from 1 or 0}}, null if
   *     unknown (see {@link PgBinaryTypes#columnFacts})
   * @return the relation as cached (with described columns and codecs)
   * @throws RuntimeException if the type catalog cannot be asked
   */
  public RelationInfo add(RelationInfo relation, Map<String, int[]> facts) {
    return store(relation, null, facts);
  }

  /**
   * Caches a relation with the given described columns, or with its columns described from {@code
   * facts} when {@code described} is null; one catalog round trip for its types at most.
   */
  private RelationInfo store(
      RelationInfo relation, List<ColumnInfo> described, Map<String, int[]> facts) {
    prepare(relation, described == null);
    List<ColumnInfo> columns = described != null ? described : describe(relation.columns(), facts);
    RelationInfo withColumns =
        RelationInfo.of(
            relation.oid(),
            relation.table(),
            relation.replicaIdentity(),
            columns,
            relation.valueTypeOids());
    RelationInfo cached = binaryTypes == null ? withColumns : withBinaryCodecs(withColumns);
    relations.put(cached.oid(), new RelationInfo[] {cached});
    return cached;
  }

  /**
   * Resolves in one catalog round trip the types of a relation's columns that the builtin decoders
   * ({@link PgBinaryValues}, and the text ones alike) cannot decode, and, when {@code describing},
   * those {@link PgType#builtin}'s table does not describe.
   */
  private void prepare(RelationInfo relation, boolean describing) {
    if (binaryTypes == null) {
      return;
    }
    List<ColumnInfo> columns = relation.columns();
    int[] valueTypes = relation.valueTypeOids();
    int[] needed = new int[columns.size() * 2];
    int n = 0;
    for (int valueType : valueTypes) {
      if (!PgBinaryValues.supports(valueType)) {
        needed[n++] = valueType;
      }
    }
    int codecs = n;
    if (describing) {
      for (ColumnInfo c : columns) {
        if (c.type().kind() == PgType.Kind.UNKNOWN && !contains(needed, codecs, c.typeOid())) {
          needed[n++] = c.typeOid();
        }
      }
    }
    if (n > 0) {
      binaryTypes.prepare(Arrays.copyOf(needed, n));
    }
  }

  private static boolean contains(int[] oids, int count, int oid) {
    for (int i = 0; i < count; i++) {
      if (oids[i] == oid) {
        return true;
      }
    }
    return false;
  }

  /** Whether two column lists agree in what a Relation message sends of them. */
  private static boolean sameAsSent(List<ColumnInfo> known, List<ColumnInfo> sent) {
    if (known.size() != sent.size()) {
      return false;
    }
    for (int i = 0; i < known.size(); i++) {
      ColumnInfo a = known.get(i);
      ColumnInfo b = sent.get(i);
      if (!a.name().equals(b.name())
          || a.typeOid() != b.typeOid()
          || a.typeModifier() != b.typeModifier()
          || a.key() != b.key()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Describes each column: its type ({@link PgBinaryTypes#describe}, after {@link #prepare};
   * without a catalog, the builtin table and the Type messages), its declared dimensions and
   * primary key position from {@code facts}.
   */
  private List<ColumnInfo> describe(List<ColumnInfo> sent, Map<String, int[]> facts) {
    List<ColumnInfo> columns = new ArrayList<>(sent.size());
    for (ColumnInfo c : sent) {
      String[] named = types.get(c.typeOid());
      String namespace = named == null ? null : named[0];
      String name = named == null ? null : named[1];
      PgType type =
          binaryTypes != null
              ? binaryTypes.describe(c.typeOid(), namespace, name)
              : c.type().kind() != PgType.Kind.UNKNOWN || name == null
                  ? c.type()
                  : PgType.unknown(c.typeOid(), namespace, name);
      int[] fact = facts == null ? null : facts.get(c.name());
      columns.add(c.describedAs(type, fact == null ? 0 : fact[0], fact == null ? -1 : fact[1]));
    }
    return columns;
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
    boolean any = false;
    for (int valueType : valueTypes) {
      any |= !PgBinaryValues.supports(valueType);
    }
    if (!any) {
      return relation;
    }
    PgBinaryCodec[] codecs = new PgBinaryCodec[columns.size()];
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
