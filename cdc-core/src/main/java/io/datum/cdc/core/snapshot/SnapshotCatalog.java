package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.RelationCache;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.types.PgBinaryTypes;
import io.datum.cdc.event.ColumnInfo;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Describes the tables a publication publishes as the stream of that publication describes them,
 * for a snapshot to read: which tables (as {@code pg_publication_tables} lists them, following
 * {@code publish_via_partition_root}), which columns (the column list of PostgreSQL 15+, stored
 * generated columns only where PostgreSQL 18's {@code publish_generated_columns} publishes them),
 * which rows (the row filter of PostgreSQL 15+), the key flags (the replica identity), and the
 * value decoders the stream's relation cache would resolve for the Relation message pgoutput would
 * send (src/backend/replication/pgoutput/pgoutput.c {@code send_relation_and_attrs}: a Type message
 * per published column whose type oid is at least {@code FirstGenbkiObjectId}, 10000, naming the
 * type's innermost base type; src/backend/replication/logical/proto.c {@code logicalrep_write_typ},
 * {@code logicalrep_write_attrs}).
 *
 * <p>Only SELECTs on the catalog, so the methods work inside a REPEATABLE READ READ ONLY
 * transaction that imported an exported snapshot (and then see the catalog as of that snapshot).
 */
public final class SnapshotCatalog {

  /** {@code FirstGenbkiObjectId} (src/include/access/transam.h): pgoutput's "user type" cutoff. */
  static final int FIRST_GENBKI_OBJECT_ID = 10000;

  private static final String PUBLICATION_QUERY =
      "SELECT pubviaroot, puballtables FROM pg_publication WHERE pubname = ?";

  private static final String TABLES_QUERY =
      "SELECT c.oid::int8, p.schemaname, p.tablename, c.relkind::text, c.relreplident::text,"
          + " c.relpages::int8, c.reltuples::float8, %s FROM pg_publication_tables p"
          + " JOIN pg_namespace n ON n.nspname = p.schemaname"
          + " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename"
          + " WHERE p.pubname = ?";

  private static final String COLUMNS_15 = "p.attnames::text[], p.rowfilter";
  private static final String COLUMNS_14 = "NULL::text[], NULL::text";

  /** Sizes of a partitioned table: the sums over its leaves (pg_partition_tree, PG 12+). */
  private static final String TREE_SIZE_QUERY =
      "SELECT coalesce(sum(c.relpages), 0)::int8, coalesce(sum(greatest(c.reltuples, 0)), 0)::float8"
          + " FROM pg_partition_tree(?::oid::regclass) t JOIN pg_class c ON c.oid = t.relid"
          + " WHERE t.isleaf";

  private static final String ATTRIBUTES_QUERY =
      "SELECT a.attname, a.atttypid::int8, a.atttypmod, a.attgenerated::text, a.attndims"
          + " FROM pg_attribute a WHERE a.attrelid = ?::oid AND a.attnum > 0"
          + " AND NOT a.attisdropped ORDER BY a.attnum";

  /** The primary key and replica identity index: key columns and all columns, in index order. */
  private static final String INDEX_QUERY =
      "SELECT i.indisprimary, i.indisreplident, i.indnkeyatts,"
          + " ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)"
          + "  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o),"
          + " ARRAY(SELECT format_type(a.atttypid, a.atttypmod)"
          + "  FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)"
          + "  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o)"
          + " FROM pg_index i WHERE i.indrelid = ?::oid AND (i.indisprimary OR i.indisreplident)"
          + " AND i.indisvalid";

  /** A type's kind, base type, and namespace and name, for following domains to their base. */
  private static final String TYPE_QUERY =
      "SELECT t.oid::int8, t.typtype::text, t.typbasetype::int8, n.nspname, t.typname"
          + " FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
          + " WHERE t.oid = ANY (?::oid[])";

  private SnapshotCatalog() {}

  /**
   * Returns every table the publication publishes, as the stream names them: the partitioned root
   * where the publication has {@code publish_via_partition_root}, else each leaf partition; every
   * table for a {@code FOR ALL TABLES} publication; inheritance children each on their own. Sorted
   * by schema and name.
   *
   * @param connection an open connection to the publication's database; only SELECTs are run
   * @param publication the publication's name
   * @param types the catalog codecs of non-builtin column types, as the stream's decoder uses them
   *     (a {@code PgTypeCatalog} with the stream's time zone), or null to keep such values as their
   *     text like a stream without one (before PostgreSQL 14)
   * @return the tables; empty if the publication publishes none
   * @throws CdcConfigurationException if the publication does not exist
   * @throws SQLException if a catalog query fails
   */
  public static List<SnapshotTable> publishedTables(
      Connection connection, String publication, PgBinaryTypes types) throws SQLException {
    requirePublication(connection, publication);
    List<Listed> listed = new ArrayList<>();
    try (PreparedStatement ps =
        connection.prepareStatement(tablesQuery(connection) + " ORDER BY 2, 3")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          listed.add(listed(rs));
        }
      }
    }
    List<SnapshotTable> tables = new ArrayList<>(listed.size());
    for (Listed l : listed) {
      tables.add(describe(connection, publication, l, types));
    }
    return tables;
  }

  /**
   * Returns one table of a publication, as {@link #publishedTables} would.
   *
   * @param connection an open connection to the publication's database; only SELECTs are run
   * @param publication the publication's name
   * @param table the table as the stream names it (a leaf partition is not published on its own by
   *     a publication with {@code publish_via_partition_root}: its root is)
   * @param types as for {@link #publishedTables}, may be null
   * @return the table
   * @throws CdcConfigurationException if the publication does not exist or does not publish the
   *     table (naming both)
   * @throws SQLException if a catalog query fails
   */
  public static SnapshotTable table(
      Connection connection, String publication, TableId table, PgBinaryTypes types)
      throws SQLException {
    boolean viaRoot = requirePublication(connection, publication);
    try (PreparedStatement ps =
        connection.prepareStatement(
            tablesQuery(connection) + " AND p.schemaname = ? AND p.tablename = ?")) {
      ps.setString(1, publication);
      ps.setString(2, table.schema());
      ps.setString(3, table.table());
      Listed listed = null;
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          listed = listed(rs);
        }
      }
      if (listed == null) {
        throw new CdcConfigurationException(
            "publication \""
                + publication
                + "\" does not publish table "
                + table
                + (viaRoot
                    ? " (it publishes partitions through their root, publish_via_partition_root)"
                    : "")
                + ": SELECT * FROM pg_publication_tables WHERE pubname = '"
                + publication
                + "' lists the tables it publishes");
      }
      return describe(connection, publication, listed, types);
    }
  }

  /** Returns the publication's publish_via_partition_root, or throws if it does not exist. */
  private static boolean requirePublication(Connection connection, String publication)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(PUBLICATION_QUERY)) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new CdcConfigurationException(
              "publication \"" + publication + "\" does not exist in the connected database");
        }
        return rs.getBoolean(1);
      }
    }
  }

  private static String tablesQuery(Connection connection) throws SQLException {
    int major = connection.getMetaData().getDatabaseMajorVersion();
    return String.format(TABLES_QUERY, major >= 15 ? COLUMNS_15 : COLUMNS_14);
  }

  /** A row of pg_publication_tables with its pg_class facts. */
  private record Listed(
      int oid,
      TableId table,
      char relkind,
      char identity,
      long relpages,
      double reltuples,
      String[] attnames,
      String rowFilter) {}

  private static Listed listed(ResultSet rs) throws SQLException {
    Array names = rs.getArray(8);
    return new Listed(
        (int) rs.getLong(1),
        new TableId(rs.getString(2), rs.getString(3)),
        rs.getString(4).charAt(0),
        rs.getString(5).charAt(0),
        rs.getLong(6),
        rs.getDouble(7),
        names == null ? null : (String[]) names.getArray(),
        rs.getString(9));
  }

  /** One column of pg_attribute. */
  private record Attribute(
      String name, int typeOid, int typeModifier, boolean generated, int dimensions) {}

  private static SnapshotTable describe(
      Connection connection, String publication, Listed listed, PgBinaryTypes types)
      throws SQLException {
    List<Attribute> attributes = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(ATTRIBUTES_QUERY)) {
      ps.setLong(1, Integer.toUnsignedLong(listed.oid()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String generated = rs.getString(4);
          attributes.add(
              new Attribute(
                  rs.getString(1),
                  (int) rs.getLong(2),
                  rs.getInt(3),
                  generated != null && !generated.isEmpty(),
                  rs.getInt(5)));
        }
      }
    }
    // the published columns: pg_publication_tables.attnames (15+) follows the column list, and on
    // 18 publish_generated_columns; before 18 pgoutput never publishes a generated column, though
    // attnames of PostgreSQL 15 lists them (pgoutput.c, pgoutput_column_list_init)
    boolean generatedPublishable = connection.getMetaData().getDatabaseMajorVersion() >= 18;
    List<Attribute> published = new ArrayList<>();
    Set<String> listedNames =
        listed.attnames() == null ? null : new HashSet<>(Arrays.asList(listed.attnames()));
    for (Attribute a : attributes) {
      boolean publishable = generatedPublishable || !a.generated();
      if (publishable && (listedNames == null ? !a.generated() : listedNames.contains(a.name()))) {
        published.add(a);
      }
    }
    if (published.isEmpty()) {
      throw new CdcConfigurationException(
          "table " + listed.table() + " of publication \"" + publication + "\" has no columns");
    }
    Keys keys = keys(connection, listed.oid());
    Set<String> identity = new HashSet<>();
    if (listed.identity() == 'f') {
      published.forEach(a -> identity.add(a.name()));
    } else if (listed.identity() == 'd' && keys.primary() != null) {
      identity.addAll(keys.primary());
    } else if (listed.identity() == 'i' && keys.replicaIdentity() != null) {
      identity.addAll(keys.replicaIdentity());
    }
    RelationCache cache = new RelationCache(types);
    Map<Integer, String[]> sentTypes = sentTypes(connection, published);
    sentTypes.forEach((oid, sent) -> cache.addType(oid, sent[0], sent[1]));
    List<ColumnInfo> columns = new ArrayList<>(published.size());
    int[] valueTypes = new int[published.size()];
    // what the stream's catalog reads of the columns (PgTypeCatalog.columnFacts), so that a read
    // row's columns equal a streamed row's
    Map<String, int[]> facts = new HashMap<>();
    for (int i = 0; i < published.size(); i++) {
      Attribute a = published.get(i);
      int inKey = keys.primary() == null ? -1 : keys.primary().indexOf(a.name());
      facts.put(a.name(), new int[] {a.dimensions(), inKey + 1});
      columns.add(
          new ColumnInfo(a.name(), a.typeOid(), a.typeModifier(), identity.contains(a.name())));
      valueTypes[i] = cache.valueType(a.typeOid());
    }
    RelationInfo relation;
    try {
      relation =
          cache.add(
              RelationInfo.of(listed.oid(), listed.table(), listed.identity(), columns, valueTypes),
              facts);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "cannot resolve the column types of table " + listed.table() + ": " + e.getMessage(), e);
    }
    long relpages = listed.relpages();
    double reltuples = listed.reltuples();
    boolean partitioned = listed.relkind() == 'p';
    if (partitioned) {
      try (PreparedStatement ps = connection.prepareStatement(TREE_SIZE_QUERY)) {
        ps.setLong(1, Integer.toUnsignedLong(listed.oid()));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          relpages = rs.getLong(1);
          reltuples = rs.getDouble(2);
        }
      }
    }
    return new SnapshotTable(
        listed.table(),
        listed.oid(),
        relation,
        keys.chunkKey(),
        keys.chunkKeyTypes(),
        listed.rowFilter(),
        partitioned,
        relpages,
        reltuples);
  }

  /**
   * The columns of the primary key and of the replica identity index (null if none), and the chunk
   * key (the primary key's key columns, else the replica identity index's) with its types.
   */
  private record Keys(
      List<String> primary,
      List<String> replicaIdentity,
      List<String> chunkKey,
      List<String> chunkKeyTypes) {}

  private static Keys keys(Connection connection, int oid) throws SQLException {
    List<String> primary = null;
    List<String> identity = null;
    List<String> primaryTypes = null;
    List<String> identityTypes = null;
    try (PreparedStatement ps = connection.prepareStatement(INDEX_QUERY)) {
      ps.setLong(1, Integer.toUnsignedLong(oid));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int keyAttributes = rs.getInt(3);
          List<String> names =
              Arrays.asList((String[]) rs.getArray(4).getArray()).subList(0, keyAttributes);
          List<String> typeNames =
              Arrays.asList((String[]) rs.getArray(5).getArray()).subList(0, keyAttributes);
          if (rs.getBoolean(1)) {
            primary = names;
            primaryTypes = typeNames;
          }
          if (rs.getBoolean(2)) {
            identity = names;
            identityTypes = typeNames;
          }
        }
      }
    }
    if (primary != null) {
      return new Keys(primary, identity, primary, primaryTypes);
    }
    if (identity != null) {
      return new Keys(null, identity, identity, identityTypes);
    }
    return new Keys(null, null, List.of(), List.of());
  }

  /**
   * The Type message pgoutput sends for each published column type at or above {@link
   * #FIRST_GENBKI_OBJECT_ID}: the column's type oid with the namespace ({@code pg_catalog} for the
   * empty one sent) and name of its innermost base type ({@code getBaseType}).
   */
  private static Map<Integer, String[]> sentTypes(Connection connection, List<Attribute> columns)
      throws SQLException {
    Set<Integer> user = new LinkedHashSet<>();
    for (Attribute a : columns) {
      if (Integer.compareUnsigned(a.typeOid(), FIRST_GENBKI_OBJECT_ID) >= 0) {
        user.add(a.typeOid());
      }
    }
    Map<Integer, String[]> sent = new HashMap<>();
    if (user.isEmpty()) {
      return sent;
    }
    Map<Integer, Object[]> known = new HashMap<>(); // oid -> {typtype, basetype, nspname, typname}
    Set<Integer> pending = new LinkedHashSet<>(user);
    for (int depth = 0; !pending.isEmpty(); depth++) {
      if (depth > 64) {
        throw new IllegalStateException("domains nested too deeply: type oids " + pending);
      }
      StringJoiner array = new StringJoiner(",", "{", "}");
      pending.forEach(o -> array.add(Integer.toUnsignedString(o)));
      try (PreparedStatement ps = connection.prepareStatement(TYPE_QUERY)) {
        ps.setString(1, array.toString());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            known.put(
                (int) rs.getLong(1),
                new Object[] {
                  rs.getString(2), (int) rs.getLong(3), rs.getString(4), rs.getString(5)
                });
          }
        }
      }
      Set<Integer> next = new LinkedHashSet<>();
      for (int oid : pending) {
        Object[] t = known.get(oid);
        if (t == null) {
          throw new IllegalStateException(
              "type oid " + Integer.toUnsignedString(oid) + " is not in pg_type");
        }
        int base = (Integer) t[1];
        if ("d".equals(t[0]) && !known.containsKey(base)) {
          next.add(base);
        }
      }
      pending = next;
    }
    for (int oid : user) {
      Object[] t = known.get(oid);
      for (int depth = 0; "d".equals(t[0]) && depth < 64; depth++) {
        t = known.get((Integer) t[1]);
      }
      sent.put(oid, new String[] {(String) t[2], (String) t[3]});
    }
    return sent;
  }

  /**
   * Returns the sessions holding a lock on a table, as text for an error or a progress line: pid,
   * mode, user and the start of the query of each ({@code pg_locks} joined with {@code
   * pg_stat_activity}); "released meanwhile" if none does now.
   *
   * @param c a connection to the table's database
   * @param table the table
   * @return the holders, never null
   * @throws SQLException if the catalogs cannot be read
   */
  static String lockHolders(Connection c, TableId table) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT string_agg(format('pid %s, %s, %s: %s', l.pid, l.mode, a.usename,"
                + " left(a.query, 80)), '; ') FROM pg_locks l"
                + " JOIN pg_stat_activity a ON a.pid = l.pid"
                + " WHERE l.granted AND l.relation = (SELECT c.oid FROM pg_class c"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relname = ?)")) {
      ps.setString(1, table.schema());
      ps.setString(2, table.table());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        String holders = rs.getString(1);
        return holders == null ? "released meanwhile" : holders;
      }
    }
  }
}
