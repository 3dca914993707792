package io.datum.cdc.core.types;

import static io.datum.cdc.core.types.PgBinaryValuesEquivalenceTest.assertSameValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Against a real PostgreSQL 17: for user-defined types (enums, domains, composites, ranges,
 * multiranges, arrays of them) and the builtin ranges, the codec {@link PgTypeCatalog} builds from
 * the catalog renders the type's send bytes as exactly its output function's text, and decodes them
 * to the value text mode gives ({@link PgTextValues} on the text, with a domain mapped to its base
 * type when the Type message would name a builtin {@link PgTextValues} lists). The send and output
 * functions are those of {@code pg_type}, as pgoutput calls them; the session settings are the
 * replication connection's, with a time zone that has historical second offsets.
 */
@EmbeddedPostgresTest
class PgTypeCatalogEquivalenceTest {

  private static Connection connection;
  private static EmbeddedPostgresServer server;

  @BeforeAll
  static void setUp(EmbeddedPostgresServer pg) throws SQLException {
    server = pg;
    pg.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'très bien', 'a,b', 'NULL', '')",
        "CREATE DOMAIN posint AS int CHECK (VALUE > 0)",
        "CREATE DOMAIN pos2 AS posint CHECK (VALUE < 100)",
        "CREATE DOMAIN addr AS inet",
        "CREATE DOMAIN moodd AS mood",
        "CREATE DOMAIN ints AS int[]",
        "CREATE TYPE floatrange AS RANGE (subtype = float8)",
        "CREATE TYPE textrange AS RANGE (subtype = text)",
        "CREATE TYPE pair AS (a int, b text)",
        "CREATE TYPE everything AS (i int, t text, m mood, n numeric, ts timestamptz, f4 float4,"
            + " f8 float8, b bytea, arr int[], iv interval, d date, bo bool, tt timetz,"
            + " u uuid, j jsonb, p pair, ps pair[], r int4range, ad addr, pi posint, bx box[],"
            + " mo money, tsr tstzrange, tx text[])",
        "CREATE TYPE dropped AS (a int, gone text, b text)",
        "ALTER TYPE dropped DROP ATTRIBUTE gone",
        "CREATE DOMAIN pairdom AS pair");
    connection = pg.getConnection();
    ReplicationSessionSettings.apply(connection);
  }

  @AfterAll
  static void tearDown() throws SQLException {
    if (connection != null) {
      connection.close();
    }
  }

  private static PgTypeCatalog catalog() {
    PgTypeCatalog catalog = new PgTypeCatalog(server::getConnection);
    catalog.timeZone("Europe/Amsterdam");
    return catalog;
  }

  private static Arguments v(String type, String literal) {
    return arguments(type, "'" + literal.replace("'", "''") + "'");
  }

  private static Arguments e(String type, String expression) {
    return arguments(type, expression);
  }

  static Stream<Arguments> values() {
    return Stream.of(
        v("mood", "ok"),
        v("mood", "très bien"),
        v("mood", "a,b"),
        v("mood", ""),
        v("mood[]", "{sad,\"très bien\",NULL,\"a,b\",\"NULL\",\"\"}"),
        v("mood[]", "{}"),
        v("mood[]", "{{sad,ok},{ok,sad}}"),
        v("mood[]", "[0:1]={sad,ok}"),
        v("posint", "5"),
        v("pos2", "7"),
        v("addr", "10.0.0.1/8"),
        v("moodd", "ok"),
        v("ints", "{1,NULL,3}"),
        v("posint[]", "{1,2}"),
        v("addr[]", "{1.2.3.4,::1}"),
        v("pos2[]", "{3}"),
        v("moodd[]", "{ok,\"a,b\"}"),
        v("int4range", "[1,10)"),
        v("int4range", "empty"),
        v("int4range", "(,5]"),
        v("int4range", "[3,)"),
        v("int4range", "(,)"),
        v("int8range", "[-9223372036854775808,0)"),
        v("numrange", "[1.50,2.250]"),
        v("numrange", "(NaN,)"),
        v("daterange", "[2020-01-01,infinity)"),
        v("daterange", "[0044-03-15 BC,2020-01-01)"),
        v("tsrange", "[\"2020-01-01 10:00:00.5\",\"2020-01-02 00:00:00\")"),
        v("tsrange", "[-infinity,infinity]"),
        v("tstzrange", "[2020-06-01 10:00:00.123+00,2021-01-01 00:00:00+00)"),
        v("tstzrange", "[1850-01-01 00:00:00+00,)"),
        v("tstzrange", "[0044-03-15 12:00:00+00 BC,2000-01-01 00:00:00+00)"),
        v("floatrange", "[1.5,2.25e300)"),
        v("floatrange", "[-0.1,NaN]"),
        v("textrange", "[\"a b\",\"c\\\"d\")"),
        v("textrange", "[\"\",z]"),
        v("int4multirange", "{[1,3),[5,7)}"),
        v("int4multirange", "{}"),
        v("nummultirange", "{[1.5,2.5],(3,)}"),
        v("datemultirange", "{[2020-01-01,2020-02-01)}"),
        v("tstzmultirange", "{[2020-01-01 00:00+00,2020-02-01 00:00+00)}"),
        v("int4range[]", "{\"[1,2)\",empty,NULL}"),
        v("textrange[]", "{\"[\\\"a b\\\",c)\"}"),
        v("int4multirange[]", "{\"{[1,2)}\"}"),
        e("pair", "ROW(1, 'x')"),
        e("pair", "ROW(NULL, NULL)"),
        e("pair", "ROW(-1, '')"),
        e("pair", "ROW(2, 'a \"quoted\", (paren) \\ back')"),
        e("pair", "ROW(3, E'tab\\there\\nline')"),
        e("pair", "ROW(4, 'NULL')"),
        e("pairdom", "ROW(5, 'dom')"),
        e("dropped", "ROW(1, 'b')"),
        e("pair[]", "ARRAY[ROW(1, 'x')::pair, NULL, ROW(2, 'a,b \"q\"')::pair]"),
        e(
            "everything",
            "ROW(1, 'a b', 'très bien', 12.340, '2026-11-30 10:18:40.5+00', 1.1::float4,"
                + " 0.1::float8, '\\x00ff', ARRAY[1,NULL], '-1 day -02:00:00.5', '0044-03-15 BC',"
                + " true, '10:00:00+05:30', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
                + " '{\"k\": [1, \"v w\"]}', ROW(1, 'x'), ARRAY[ROW(2, 'y z')::pair],"
                + " '[1,5)', '1.2.3.4/24', 9, ARRAY[box '(1,2),(3,4)', box '(0,0),(1,1)'],"
                + " 1234.5, '[2020-01-01 00:00+00,)', ARRAY['a', NULL, ''])"),
        e(
            "everything",
            "ROW(NULL, NULL, NULL, 'NaN', 'infinity', 'NaN'::float4, '-Infinity', '\\x', '{}',"
                + " 'PT0S', 'infinity', false, '24:00:00-15:59', NULL, 'null', ROW(NULL, NULL),"
                + " '{}', 'empty', '::1', NULL, NULL, -0.01, 'empty', '{}')"),
        e(
            "everything",
            "ROW(0, '', 'ok', -0.001, '1850-01-01 00:00:00+00', 1e-40::float4,"
                + " 1e22::float8, '\\x41', ARRAY[[1,2],[3,4]], 'P1Y2M3DT4H5M6.000001S',"
                + " '2000-01-01', true, '00:00:00.000001+00', NULL, '[]', NULL, NULL,"
                + " '(,)', NULL, 1, NULL, 0, NULL, ARRAY['x\\y', 'NULL'])"));
  }

  /** The send bytes and output text of one value, and its oid. */
  private record Sample(int oid, String text, byte[] binary) {}

  private static String argType(String function) {
    return "(SELECT CASE WHEN a.typtype = 'p' THEN NULL ELSE a.oid::regtype::text END FROM pg_proc p"
        + " JOIN pg_type a ON a.oid = p.proargtypes[0] WHERE p.oid = "
        + function
        + ")";
  }

  private static Sample sample(String type, String expression) throws SQLException {
    String out;
    String send;
    int oid;
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT t.oid, t.typoutput::regproc::text, t.typsend::regproc::text,"
                    + " "
                    + argType("t.typoutput")
                    + ", "
                    + argType("t.typsend")
                    + ","
                    // a pseudo-type argument (anyenum) does not accept a domain: pass the base
                    + " CASE WHEN t.typtype = 'd' THEN t.typbasetype::regtype::text END"
                    + " FROM pg_type t WHERE t.oid = '"
                    + type.replace("'", "''")
                    + "'::regtype")) {
      assertTrue(rs.next(), type);
      oid = rs.getInt(1);
      String base = rs.getString(6) == null ? "" : "::" + rs.getString(6);
      out =
          rs.getString(2) + "(v" + (rs.getString(4) == null ? base : "::" + rs.getString(4)) + ")";
      send =
          rs.getString(3) + "(v" + (rs.getString(5) == null ? base : "::" + rs.getString(5)) + ")";
    }
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT textin("
                    + out
                    + "), "
                    + send
                    + " FROM (SELECT ("
                    + expression
                    + ")::"
                    + type
                    + " AS v) x")) {
      assertTrue(rs.next());
      return new Sample(oid, rs.getString(1), rs.getBytes(2));
    }
  }

  /**
   * The oid text mode decodes a column of this type as: the innermost base type of a domain when
   * its name (in pg_catalog) is one PgTextValues lists, as PgOutputDecoder.resolveType maps it; the
   * type's own oid otherwise.
   */
  private static int textModeOid(int oid) throws SQLException {
    int base = oid;
    while (true) {
      try (Statement s = connection.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT t.typtype, t.typbasetype, n.nspname, t.typname FROM pg_type t"
                      + " JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = "
                      + base)) {
        assertTrue(rs.next());
        if (!rs.getString(1).equals("d")) {
          if (base != oid
              && rs.getString(3).equals("pg_catalog")
              && PgBuiltinType.oidNamed(rs.getString(4)) != 0) {
            return PgBuiltinType.oidNamed(rs.getString(4));
          }
          return oid;
        }
        base = rs.getInt(2);
      }
    }
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("values")
  void codecRendersTheOutputTextAndDecodesToTheTextModeValue(String type, String expression)
      throws SQLException {
    Sample s = sample(type, expression);
    PgTypeCatalog catalog = catalog();
    catalog.prepare(new int[] {s.oid()});
    PgBinaryCodec codec = catalog.codec(s.oid());
    String what = type + " " + expression + " text=" + s.text();
    assertEquals(s.text(), codec.text(new PgBinaryCursor(s.binary(), 0, s.binary().length)), what);
    int textOid = textModeOid(s.oid());
    // text mode: the builtin decoders where the (domain-mapped) oid is theirs, else the codec
    Object fromText =
        PgBinaryValues.supports(textOid)
            ? PgTextValues.decode(textOid, s.text())
            : codec.textValue(s.text());
    assertSameValue(fromText, codec.value(s.binary(), 0, s.binary().length), what);
    if (type.endsWith("[]") && !type.equals("bx[]")) {
      assertInstanceOf(java.util.List.class, fromText, what + ": arrays of user types are Lists");
    }
  }

  @Test
  void dependenciesResolveInOnePassPerNestingLevelAndAreCached() throws SQLException {
    PgTypeCatalog catalog = catalog();
    int everything = oid("everything");
    catalog.prepare(new int[] {everything});
    long afterFirst = catalog.queries();
    // everything -> (mood, pair, pair[], addr, posint, ...) -> (pair's fields are builtins)
    assertTrue(afterFirst >= 1 && afterFirst <= 3, "queries: " + afterFirst);
    catalog.prepare(new int[] {everything, oid("pair"), oid("mood"), oid("addr")});
    Sample s =
        sample(
            "everything",
            "ROW(1, 'x', 'ok', 1, NULL, NULL, NULL, NULL, NULL, NULL,"
                + " NULL, NULL, NULL, NULL, NULL, ROW(1, 'y'), NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
                + " NULL)");
    for (int i = 0; i < 3; i++) {
      catalog.codec(everything).value(s.binary(), 0, s.binary().length);
    }
    assertEquals(afterFirst, catalog.queries(), "no query for known types or per value");
  }

  @Test
  void aTypeCreatedLaterIsResolvedLazilyOnce() throws SQLException {
    PgTypeCatalog catalog = catalog();
    catalog.prepare(new int[] {oid("mood")});
    long before = catalog.queries();
    server.execute("CREATE TYPE later AS ENUM ('x')");
    int later = oid("later");
    PgBinaryCodec codec = catalog.codec(later);
    assertInstanceOf(PgBinaryCodec.EnumType.class, codec);
    assertEquals(before + 1, catalog.queries());
    assertEquals("x", codec.value(new byte[] {'x'}, 0, 1));
    catalog.prepare(new int[] {later});
    assertEquals(before + 1, catalog.queries());
  }

  @Test
  void preloadResolvesThePublishedTablesTypes() throws SQLException {
    server.execute(
        "CREATE TABLE published (id int PRIMARY KEY, m mood, r int4range, p pair, n int)",
        "CREATE PUBLICATION types_pub FOR TABLE published");
    PgTypeCatalog catalog = catalog();
    catalog.preload(connection, "types_pub");
    long loaded = catalog.queries();
    catalog.prepare(new int[] {oid("mood"), oid("int4range"), oid("pair")});
    assertEquals(loaded, catalog.queries(), "preloaded types need no query");
    assertInstanceOf(PgBinaryCodec.Range.class, catalog.codec(oid("int4range")));
    assertEquals(loaded, catalog.queries());
  }

  @Test
  void baseTypesWithoutAKnownFormatFailNamingTheType() throws SQLException {
    // a base type made of text's I/O functions, as an extension would declare one
    server.execute(
        "CREATE TYPE exttype",
        "CREATE FUNCTION exttype_in(cstring) RETURNS exttype AS 'textin' LANGUAGE internal"
            + " IMMUTABLE STRICT",
        "CREATE FUNCTION exttype_out(exttype) RETURNS cstring AS 'textout' LANGUAGE internal"
            + " IMMUTABLE STRICT",
        "CREATE TYPE exttype (INPUT = exttype_in, OUTPUT = exttype_out, LIKE = text)");
    PgTypeCatalog catalog = catalog();
    int ext = oid("exttype");
    int tsquery = oid("tsquery");
    catalog.prepare(new int[] {ext, tsquery});
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> catalog.codec(ext).value(new byte[] {'a'}, 0, 1));
    assertTrue(e.getMessage().contains("public.exttype (oid " + ext + ")"), e.getMessage());
    assertTrue(e.getMessage().contains("binary(false)"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> catalog.codec(tsquery).value(new byte[] {0, 0, 0, 0}, 0, 4));
    assertTrue(e.getMessage().contains("pg_catalog.tsquery"), e.getMessage());
    assertTrue(e.getMessage().contains("does not decode"), e.getMessage());
  }

  @Test
  void aDroppedTypeFailsNamingTheOid() {
    PgTypeCatalog catalog = catalog();
    int gone = 987_654_321;
    catalog.prepare(new int[] {gone});
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> catalog.codec(gone).value(new byte[0], 0, 0));
    assertTrue(
        e.getMessage().contains("oid 987654321") && e.getMessage().contains("pg_type"),
        e.getMessage());
  }

  private static int oid(String type) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT '" + type + "'::regtype::oid::int8")) {
      assertTrue(rs.next());
      return (int) rs.getLong(1);
    }
  }
}
