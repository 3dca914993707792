package io.datum.cdc.core.types;

import io.datum.cdc.event.PgType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves the column types that are not builtin from the catalog, over an ordinary SQL connection
 * (the source's admin connection), and builds a {@link PgBinaryCodec} per type oid: for binary
 * values, and in text mode for arrays of user types (whose elements decode by the element type).
 * pgoutput does not say what kind a non-builtin type is (its Type message carries a namespace and a
 * name only, and a domain comes under its base type's name but with its own oid: {@code
 * logicalrep_write_typ}, src/backend/replication/logical/proto.c), so this asks {@code pg_type}:
 * {@code typtype} ({@code e} enum, {@code d} domain with {@code typbasetype}, {@code c} composite
 * with the attributes of {@code typrelid}, {@code r} range with {@code pg_range.rngsubtype}, {@code
 * m} multirange with the range whose {@code rngmultitypid} it is), {@code typelem} for arrays,
 * {@code typdelim}. Every dependency (base, element, subtype, range, attribute types) is resolved
 * in the same pass, one query per level of nesting.
 *
 * <p>When: {@link #preload} at start, for every column type of the published tables; then at a
 * Relation message, {@link #prepare} for any of its column types not known yet (a type created
 * while the source runs), with a connection opened for that one query. Each oid is queried once and
 * cached for the life of the source (one catalog serves every connection after a reconnect, so a
 * type dropped while the source runs decodes as the catalog described it); nothing is queried per
 * row, except that a composite value whose field type the cached attribute list does not hold (an
 * attribute added by {@code ALTER TYPE} since) resolves that field type once.
 *
 * <p>The same rows describe the column types in the events ({@link #describe}, a {@link
 * io.datum.cdc.event.PgType} per oid, cached; the type query also reads {@code typtypmod} and an
 * enum's labels). {@link #columnFacts} gives the declared dimensions ({@code attndims}) and primary
 * key positions of a relation's columns: read for the published tables by {@link #preload}, one
 * more query at start; for a relation not among them or whose columns changed, one query at its
 * Relation message.
 *
 * <p>Types stay undecodable, their codec failing with a message that names the type and why: base
 * types outside PostgreSQL's builtins (extension types such as {@code hstore}, {@code citext} or
 * PostGIS {@code geometry}: their send format is the extension's own), builtin types {@link
 * PgBinaryOutput} does not render ({@code regclass} and the other {@code reg*} types, whose text is
 * a catalog name the oid does not carry; {@code tsquery}, {@code pg_node_tree} ...), and types
 * dropped before the catalog was asked. Used by the replication thread only (not thread-safe).
 */
public final class PgTypeCatalog implements PgBinaryTypes {

  private static final Logger LOG = LoggerFactory.getLogger(PgTypeCatalog.class);

  /** Where the catalog's lazy queries get their connection, and how their failures are reported. */
  public interface ConnectionSource {
    /**
     * Opens a connection for one lazy query; the catalog closes it after the query.
     *
     * @return an open connection to the source database
     * @throws SQLException if connecting fails
     */
    Connection open() throws SQLException;

    /**
     * Turns a failed lazy query into the exception the decoder throws (the source maps it by
     * SQLSTATE, so a lost connection is retried). By default an {@link IllegalStateException}.
     *
     * @param what what failed, for the message
     * @param e the failure
     * @return the exception to throw, not null
     */
    default RuntimeException failure(String what, SQLException e) {
      return new IllegalStateException(what + ": " + e.getMessage(), e);
    }
  }

  /** One row per type oid; needs PostgreSQL 14 (typsubscript, rngmultitypid), as binary does. */
  private static final String TYPE_QUERY =
      "SELECT t.oid::int8, n.nspname, t.typname, t.typtype, t.typbasetype::int8,"
          + " CASE WHEN t.typsubscript::oid = 'array_subscript_handler'::regproc::oid"
          + " THEN t.typelem ELSE 0 END::int8, t.typdelim, t.typsend::oid <> 0,"
          + " coalesce(r.rngsubtype, 0)::int8, coalesce(mr.rngtypid, 0)::int8,"
          + " (SELECT string_agg(a.atttypid::text, ',' ORDER BY a.attnum) FROM pg_attribute a"
          + "  WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped),"
          + " t.typtypmod, CASE WHEN t.typtype = 'e' THEN ARRAY(SELECT e.enumlabel::text"
          + "  FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) END"
          + " FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
          + " LEFT JOIN pg_range r ON r.rngtypid = t.oid"
          + " LEFT JOIN pg_range mr ON mr.rngmultitypid = t.oid"
          + " WHERE t.oid = ANY (?::oid[])";

  /** The column types of the tables a publication publishes. */
  private static final String PUBLISHED_TYPES_QUERY =
      "SELECT DISTINCT a.atttypid::int8 FROM pg_publication_tables p"
          + " JOIN pg_namespace n ON n.nspname = p.schemaname"
          + " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename"
          + " JOIN pg_attribute a ON a.attrelid = c.oid"
          + " WHERE p.pubname = ? AND a.attnum > 0 AND NOT a.attisdropped";

  /** Attribute facts of the published tables, or of given relations (PostgreSQL 11+). */
  private static final String COLUMN_FACTS_QUERY =
      "SELECT a.attrelid::int8, a.attname, a.attndims,"
          + " coalesce((SELECT k.o FROM pg_index i,"
          + "  unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o) WHERE i.indrelid = a.attrelid"
          + "  AND i.indisprimary AND k.n = a.attnum AND k.o <= i.indnkeyatts), 0)::int4"
          + " FROM pg_attribute a WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attrelid IN (%s)";

  private static final String PUBLISHED_RELATIONS =
      "SELECT c.oid FROM pg_publication_tables p"
          + " JOIN pg_namespace n ON n.nspname = p.schemaname"
          + " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename"
          + " WHERE p.pubname = ?";

  private final ConnectionSource connections;

  /** Described types by oid (user types and builtin ones outside {@link PgType#builtin}). */
  private final Map<Integer, PgType> described = new HashMap<>();

  /** Relation oid to column name to {attndims, primary key position}. */
  private final Map<Integer, Map<String, int[]>> columnFacts = new HashMap<>();

  private final Map<Integer, PgTypeInfo> infos = new HashMap<>();

  /** Oids asked for that pg_type did not hold. */
  private final Set<Integer> missing = new HashSet<>();

  private final Map<Integer, PgBinaryCodec> codecs = new HashMap<>();
  private ZoneId zone;
  private String zoneName;
  private long queries;

  /**
   * @param connections opens a connection for a lazy query (closed after it)
   */
  public PgTypeCatalog(ConnectionSource connections) {
    this.connections = connections;
  }

  /**
   * Sets the replication session's {@code TimeZone} ({@code timestamptz} text inside ranges,
   * composites and arrays prints in it). Codecs built before are dropped.
   *
   * @param timeZone the session's TimeZone as PostgreSQL reports it, e.g. {@code Europe/Amsterdam};
   *     null or a name the JVM does not know leaves timestamptz text unrenderable
   */
  public void timeZone(String timeZone) {
    zoneName = timeZone;
    zone = null;
    if (timeZone != null) {
      try {
        zone = ZoneId.of(timeZone);
      } catch (DateTimeException e) {
        LOG.warn(
            "replication session TimeZone {} is not a zone the JVM knows: timestamptz"
                + " inside ranges, composites and arrays of user types cannot be decoded in binary"
                + " mode",
            timeZone);
      }
    }
    codecs.clear();
  }

  /** Returns the number of catalog queries run so far (for tests). */
  long queries() {
    return queries;
  }

  /**
   * Resolves every column type of the tables a publication publishes, with the given connection.
   *
   * @param connection an open SQL connection to the source database
   * @param publication the publication name
   * @throws SQLException if a query fails
   */
  public void preload(Connection connection, String publication) throws SQLException {
    Set<Integer> oids = new LinkedHashSet<>();
    try (PreparedStatement ps = connection.prepareStatement(PUBLISHED_TYPES_QUERY)) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int oid = (int) rs.getLong(1);
          if (needsCatalog(oid)) {
            oids.add(oid);
          }
        }
      }
    }
    queries++;
    load(connection, oids);
    try (PreparedStatement ps =
        connection.prepareStatement(String.format(COLUMN_FACTS_QUERY, PUBLISHED_RELATIONS))) {
      ps.setString(1, publication);
      readColumnFacts(ps);
    }
  }

  /** Runs a column facts query and caches its rows by relation. */
  private void readColumnFacts(PreparedStatement ps) throws SQLException {
    queries++;
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        columnFacts
            .computeIfAbsent((int) rs.getLong(1), r -> new HashMap<>())
            .put(rs.getString(2), new int[] {rs.getInt(3), rs.getInt(4)});
      }
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>The published tables' facts are read by {@link #preload}; a relation not among them, or with
   * a column they do not list, or {@code refresh}, costs one query with a connection opened for it.
   */
  @Override
  public Map<String, int[]> columnFacts(int relationOid, List<String> columns, boolean refresh) {
    Map<String, int[]> known = columnFacts.get(relationOid);
    if (known != null && !refresh && known.keySet().containsAll(columns)) {
      return known;
    }
    columnFacts.remove(relationOid);
    try (Connection connection = connections.open();
        PreparedStatement ps =
            connection.prepareStatement(String.format(COLUMN_FACTS_QUERY, "?::oid"))) {
      ps.setLong(1, Integer.toUnsignedLong(relationOid));
      readColumnFacts(ps);
    } catch (SQLException e) {
      throw connections.failure(
          "cannot read the columns of relation oid "
              + Integer.toUnsignedString(relationOid)
              + " from pg_attribute and pg_index",
          e);
    }
    return columnFacts.get(relationOid);
  }

  /**
   * {@inheritDoc}
   *
   * <p>A type outside {@link PgType#builtin}'s table is described from {@code pg_type} as {@link
   * #load} read it (at most one query, for a type not seen before), its element or base type
   * likewise; the description is cached for the life of the catalog.
   */
  @Override
  public PgType describe(int typeOid, String sentNamespace, String sentName) {
    PgType type = describe(typeOid, 0);
    if (type.kind() == PgType.Kind.UNKNOWN && sentName != null) {
      return PgType.unknown(typeOid, sentNamespace, sentName);
    }
    return type;
  }

  private PgType describe(int oid, int depth) {
    PgType builtin = PgType.builtin(oid);
    if (builtin.kind() != PgType.Kind.UNKNOWN) {
      return builtin;
    }
    PgType known = described.get(oid);
    if (known != null) {
      return known;
    }
    if (!infos.containsKey(oid) && !missing.contains(oid)) {
      prepare(new int[] {oid});
    }
    PgTypeInfo info = infos.get(oid);
    if (info == null || depth > 32) { // 32: see build
      return builtin;
    }
    PgType.Kind kind = PgType.Kind.of(info.kind(), info.element() != 0);
    PgType type =
        switch (kind) {
          case ARRAY ->
              PgType.arrayOf(oid, info.schema(), info.name(), describe(info.element(), depth + 1));
          case DOMAIN ->
              new PgType(
                  oid,
                  info.schema(),
                  info.name(),
                  kind,
                  null,
                  describe(info.baseType(), depth + 1),
                  info.baseModifier(),
                  List.of());
          case ENUM ->
              new PgType(oid, info.schema(), info.name(), kind, null, null, -1, info.enumLabels());
          default -> PgType.of(oid, info.schema(), info.name(), kind);
        };
    described.put(oid, type);
    return type;
  }

  /** Returns true if a type oid needs the catalog: neither decoded nor rendered as a builtin. */
  static boolean needsCatalog(int oid) {
    return !PgBinaryOutput.renders(oid);
  }

  @Override
  public void prepare(int[] typeOids) {
    Set<Integer> unknown = new LinkedHashSet<>();
    for (int oid : typeOids) {
      if (needsCatalog(oid) && !infos.containsKey(oid) && !missing.contains(oid)) {
        unknown.add(oid);
      }
    }
    if (unknown.isEmpty()) {
      return;
    }
    try (Connection connection = connections.open()) {
      load(connection, unknown);
    } catch (SQLException e) {
      throw connections.failure("cannot look up type oids " + unknown + " in pg_type", e);
    }
  }

  /**
   * Queries the given oids and, level by level, every type they depend on that is not known yet.
   */
  void load(Connection connection, Set<Integer> oids) throws SQLException {
    Set<Integer> pending = new LinkedHashSet<>(oids);
    pending.removeIf(o -> !needsCatalog(o) || infos.containsKey(o) || missing.contains(o));
    while (!pending.isEmpty()) {
      StringJoiner array = new StringJoiner(",", "{", "}");
      pending.forEach(o -> array.add(Integer.toUnsignedString(o)));
      Set<Integer> found = new HashSet<>();
      try (PreparedStatement ps = connection.prepareStatement(TYPE_QUERY)) {
        ps.setString(1, array.toString());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            PgTypeInfo info = row(rs);
            infos.put(info.oid(), info);
            found.add(info.oid());
          }
        }
      }
      queries++;
      Set<Integer> next = new LinkedHashSet<>();
      for (int oid : pending) {
        PgTypeInfo info = infos.get(oid);
        if (!found.contains(oid)) {
          missing.add(oid);
          continue;
        }
        for (int dependency : info.dependencies()) {
          if (needsCatalog(dependency)
              && !infos.containsKey(dependency)
              && !missing.contains(dependency)) {
            next.add(dependency);
          }
        }
      }
      LOG.debug("resolved type oids {} from pg_type", found);
      pending = next;
    }
  }

  private static PgTypeInfo row(ResultSet rs) throws SQLException {
    String attributes = rs.getString(11);
    java.sql.Array labels = rs.getArray(13);
    int[] attributeTypes =
        attributes == null || attributes.isEmpty()
            ? new int[0]
            : Arrays.stream(attributes.split(",")).mapToInt(Integer::parseUnsignedInt).toArray();
    String kind = rs.getString(4);
    String delimiter = rs.getString(7);
    return new PgTypeInfo(
        (int) rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        kind == null || kind.isEmpty() ? '?' : kind.charAt(0),
        (int) rs.getLong(5),
        (int) rs.getLong(6),
        delimiter == null || delimiter.isEmpty() ? ',' : delimiter.charAt(0),
        rs.getBoolean(8),
        (int) rs.getLong(9),
        (int) rs.getLong(10),
        attributeTypes,
        rs.getInt(12),
        labels == null ? List.of() : List.of((String[]) labels.getArray()));
  }

  @Override
  public PgBinaryCodec codec(int typeOid) {
    PgBinaryCodec codec = codecs.get(typeOid);
    if (codec == null) {
      if (needsCatalog(typeOid) && !infos.containsKey(typeOid) && !missing.contains(typeOid)) {
        prepare(new int[] {typeOid});
      }
      codec = build(typeOid, 0);
      codecs.put(typeOid, codec);
    }
    return codec;
  }

  /**
   * {@inheritDoc}
   *
   * <p>For a type oid {@code pg_type} does not hold, the Type message's name decides: an array
   * type's name begins with {@code _} ({@code makeArrayTypeName}, src/backend/catalog/pg_type.c),
   * and its binary values name their element type in their header, so they still decode (see {@link
   * PgBinaryCodec.SentArray}), each element of a type the catalog does not hold by the rule a value
   * of it in a column follows; any other such type decodes as {@link PgBinaryCodec.Unidentified}
   * says (a record, or outside {@code pg_catalog} an enum label), else fails naming the type.
   */
  @Override
  public PgBinaryCodec codec(int typeOid, String sentNamespace, String sentName) {
    PgBinaryCodec codec = codec(typeOid);
    if (!codec.missing() || sentName == null) {
      return codec;
    }
    String name = sentNamespace + '.' + sentName;
    // outside pg_catalog the base type is a user type: an enum's value is its label's text
    boolean labels = !"pg_catalog".equals(sentNamespace);
    if (sentName.startsWith("_")) {
      // one rule for a type and its arrays: an element of a type the catalog does not hold decodes
      // as a value of that type in a column would (the array type is in its element's namespace)
      String elementName = sentNamespace + '.' + sentName.substring(1);
      return new PgBinaryCodec.SentArray(
          typeOid,
          name,
          elementOid -> {
            PgBinaryCodec element = codec(elementOid);
            return element.missing()
                ? new PgBinaryCodec.Unidentified(elementOid, elementName, this::knownCodec, labels)
                : element;
          });
    }
    return new PgBinaryCodec.Unidentified(typeOid, name, this::knownCodec, labels);
  }

  /**
   * Returns the codec of a type oid that is builtin or already known, without a catalog query (for
   * the field types a value of an unidentified type names); an always-failing codec otherwise.
   */
  private PgBinaryCodec knownCodec(int oid) {
    if (!needsCatalog(oid) || infos.containsKey(oid)) {
      return codec(oid);
    }
    return new PgBinaryCodec.Unsupported(
        oid, "type", "it is neither builtin nor known to the catalog");
  }

  private PgBinaryCodec cached(int oid, int depth) {
    PgBinaryCodec codec = codecs.get(oid);
    if (codec == null) {
      codec = build(oid, depth);
      codecs.put(oid, codec);
    }
    return codec;
  }

  private PgBinaryCodec build(int oid, int depth) {
    if (!needsCatalog(oid)) {
      return new PgBinaryCodec.Builtin(oid, "builtin type", zone);
    }
    PgTypeInfo info = infos.get(oid);
    if (info == null) {
      return new PgBinaryCodec.Unidentified(oid, "type", this::knownCodec, false);
    }
    String name = info.qualifiedName();
    if (depth > 32) { // the server limits nesting far below; guards against a corrupt catalog
      return new PgBinaryCodec.Unsupported(oid, name, "types nested too deeply");
    }
    if (info.element() != 0) {
      return new PgBinaryCodec.ArrayOf(oid, name, cached(info.element(), depth + 1));
    }
    switch (info.kind()) {
      case 'e':
        return new PgBinaryCodec.EnumType(oid, name);
      case 'd':
        return new PgBinaryCodec.Domain(oid, name, cached(info.baseType(), depth + 1));
      case 'r':
        return new PgBinaryCodec.Range(oid, name, cached(info.rangeSubtype(), depth + 1));
      case 'm':
        return new PgBinaryCodec.Multirange(oid, name, cached(info.multirangeOf(), depth + 1));
      case 'c':
        {
          int[] fieldOids = info.attributeTypes();
          PgBinaryCodec[] fields = new PgBinaryCodec[fieldOids.length];
          for (int i = 0; i < fields.length; i++) {
            fields[i] = cached(fieldOids[i], depth + 1);
          }
          return new PgBinaryCodec.Composite(oid, name, fieldOids, fields, this::codec);
        }
      case 'b':
        return new PgBinaryCodec.Unsupported(
            oid,
            name,
            "it is a base type whose binary format"
                + (info.schema().equals("pg_catalog")
                    ? " datum-cdc does not decode"
                    : " is its extension's own (typsend "
                        + (info.hasSend() ? "set" : "not set")
                        + ")")
                + "; stream with binary(false), where it arrives as its text output");
      default:
        return new PgBinaryCodec.Unsupported(
            oid, name, "its kind (typtype '" + info.kind() + "') has no binary decoder");
    }
  }

  /** Returns the replication session's TimeZone name as set, for messages. */
  String timeZoneName() {
    return zoneName;
  }
}
