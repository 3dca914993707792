package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.PgInterval;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Against a real PostgreSQL 17: for each value, the type's send function's bytes decoded by {@link
 * PgBinaryValues} equal what {@link PgTextValues} gives for the type's output function's text,
 * under the session settings the source uses. The send and output functions are taken from {@code
 * pg_type} ({@code typsend}, {@code typoutput}), so every case calls exactly the function pgoutput
 * calls ({@code OidSendFunctionCall} / {@code OidOutputFunctionCall}, proto.c).
 */
@EmbeddedPostgresTest
class PgBinaryValuesEquivalenceTest {

  private static Connection connection;

  @BeforeAll
  static void setUp(EmbeddedPostgresServer pg) throws SQLException {
    pg.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'très bien')",
        "CREATE DOMAIN posint AS int CHECK (VALUE > 0)",
        "CREATE DOMAIN label AS text",
        "CREATE TYPE pair AS (a int, b text)");
    connection = pg.getConnection();
    ReplicationSessionSettings.apply(connection);
  }

  @AfterAll
  static void tearDown() throws SQLException {
    if (connection != null) {
      connection.close();
    }
  }

  private static Arguments v(String type, String literal) {
    return arguments(type, "'" + literal.replace("'", "''") + "'");
  }

  private static Arguments e(String type, String expression) {
    return arguments(type, expression);
  }

  static Stream<Arguments> values() {
    return Stream.of(
        v("bool", "t"),
        v("bool", "f"),
        v("int2", "32767"),
        v("int2", "-32768"),
        v("int2", "0"),
        v("int4", "2147483647"),
        v("int4", "-2147483648"),
        v("int8", "9223372036854775807"),
        v("int8", "-9223372036854775808"),
        v("oid", "0"),
        v("oid", "4294967295"),
        v("float4", "1.5"),
        v("float4", "NaN"),
        v("float4", "Infinity"),
        v("float4", "-Infinity"),
        v("float4", "-0"),
        v("float4", "1.4e-45"),
        v("float4", "1e-40"),
        v("float4", "3.4028235e38"),
        v("float4", "0.1"),
        v("float8", "0.1"),
        v("float8", "NaN"),
        v("float8", "-Infinity"),
        v("float8", "-0"),
        v("float8", "4.9e-324"),
        v("float8", "1e-310"),
        v("float8", "2.2250738585072014e-308"),
        v("float8", "1.7976931348623157e308"),
        v("float8", "123456789.125"),
        v("numeric", "0"),
        v("numeric", "0.000"),
        v("numeric", "-0.001"),
        v("numeric", "12.340"),
        v("numeric", "NaN"),
        v("numeric", "Infinity"),
        v("numeric", "-Infinity"),
        v("numeric", "1e100"),
        v("numeric", "1e-20"),
        v("numeric", "10000"),
        v("numeric", "100000000"),
        v("numeric", "9999.9999"),
        v("numeric", "0.0001"),
        v("numeric", "-99999999999999999999.99999"),
        v("numeric", "123456789012345678901234567890.123456789"),
        e("numeric", "1.5::numeric(10,5)"),
        e("numeric", "1::numeric / 3"),
        e("numeric", "(repeat('9', 1000) || '.' || repeat('1', 1000))::numeric"),
        v("text", ""),
        v("text", "NULL"),
        v("text", "héllo 😀"),
        v("text", "a'b\"c\\d\t\n"),
        v("varchar(10)", "abc"),
        v("char(5)", "ab"),
        v("name", "pg_class"),
        v("\"char\"", "a"),
        v("\"char\"", ""),
        e("\"char\"", "chr(200)"),
        v("bytea", "\\x"),
        v("bytea", "\\x00ff10"),
        e("bytea", "decode(repeat('ab', 1000), 'hex')"),
        v("json", "{\"a\": \"é😀\",  \"b\": [1, 2.50]}"),
        v("json", "\"\\u00e9\""),
        v("json", "  [1,2]  "),
        v("json", "null"),
        v("jsonb", "{\"b\": 1, \"a\": [true, null, 2.50]}"),
        v("jsonb", "\"\\u00e9 😀\""),
        v("uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        v("uuid", "00000000-0000-0000-0000-000000000000"),
        v("uuid", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
        v("date", "infinity"),
        v("date", "-infinity"),
        v("date", "0044-03-15 BC"),
        v("date", "4714-11-24 BC"),
        v("date", "5874897-12-31"),
        v("date", "2000-01-01"),
        v("date", "1999-12-31"),
        v("date", "0001-01-01"),
        v("date", "0001-12-31 BC"),
        v("time", "00:00:00"),
        v("time", "23:59:59.999999"),
        v("time", "24:00:00"),
        v("time", "10:18:40.5"),
        v("timetz", "24:00:00+00"),
        v("timetz", "10:18:40.5-03:30"),
        v("timetz", "00:00:00+15:59"),
        v("timetz", "12:00:00-15:59:59"),
        v("timetz", "10:00:00+05:30:15"),
        v("timestamp", "infinity"),
        v("timestamp", "-infinity"),
        v("timestamp", "2026-11-30 10:18:40.123456"),
        v("timestamp", "0044-03-15 12:00:00 BC"),
        v("timestamp", "294276-12-31 23:59:59.999999"),
        v("timestamp", "4714-11-24 00:00:00 BC"),
        v("timestamp", "1999-12-31 23:59:59.999999"),
        v("timestamp", "2000-01-01 00:00:00"),
        v("timestamptz", "infinity"),
        v("timestamptz", "-infinity"),
        v("timestamptz", "2026-11-30 10:18:40.123456+05:30"),
        v("timestamptz", "1850-01-01 00:00:00+00"),
        v("timestamptz", "0044-03-15 12:00:00+00 BC"),
        v("timestamptz", "294276-12-31 23:59:59.999999+00"),
        v("interval", "P1Y2M3DT4H5M6.5S"),
        v("interval", "-1 years -2 mons +3 days -04:05:06.000001"),
        v("interval", "0"),
        v("interval", "178956970 years 7 mons"),
        v("interval", "-178956970 years -8 mons"),
        v("interval", "2147483647 days"),
        v("interval", "-2147483648 days"),
        v("interval", "2562047788:00:54.775807"),
        v("interval", "-0.5 seconds"),
        // arrays PgTextValues decodes to Lists
        v("int4[]", "{1,2,NULL}"),
        v("int4[]", "{{1,2},{3,4}}"),
        v("int4[]", "{}"),
        v("int4[]", "[0:1]={1,2}"),
        v("int4[]", "[-3:-2][1:2]={{1,2},{3,4}}"),
        v("int4[]", "{{NULL}}"),
        v("int2[]", "{1,-1}"),
        v("int8[]", "{1,NULL}"),
        v("text[]", "{\"a b\",\"\",NULL,\"NULL\",\"x\\\"y\",\"{}\",é,\"a,b\"}"),
        v("varchar[]", "{a}"),
        v("char(2)[]", "{a,bc}"),
        v("\"char\"[]", "{a,b}"),
        v("name[]", "{pg_class}"),
        v("oid[]", "{0,4294967295}"),
        v("bool[]", "{t,f,NULL}"),
        v("numeric[]", "{12.340,NaN,-Infinity,0.000}"),
        v("float4[]", "{1.5,NaN,-0}"),
        v("float8[]", "{NaN,-0,1e-310,Infinity}"),
        v("date[]", "{infinity,2026-11-30,\"0044-03-15 BC\"}"),
        v("time[]", "{24:00:00,10:00}"),
        v("timetz[]", "{10:00+02}"),
        v("timestamp[]", "{\"2026-11-30 10:18:40.5\",-infinity}"),
        v("timestamptz[]", "{\"2026-11-30 10:18:40.5+00\",infinity}"),
        v("interval[]", "{P1Y,PT-0.5S}"),
        v("bytea[]", "{\"\\\\x00ff\",NULL,\"\\\\x\"}"),
        e("json[]", "ARRAY['{\"a\": 1}'::json, '[]'::json]"),
        e("jsonb[]", "ARRAY['{\"a\": 1}'::jsonb, NULL]"),
        v("uuid[]", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}"),
        // builtins PgTextValues keeps as text
        v("inet", "1.2.3.4"),
        v("inet", "1.2.3.4/24"),
        v("inet", "::1"),
        v("inet", "::"),
        v("inet", "::ffff:1.2.3.4"),
        v("inet", "::1.2.3.4"),
        v("inet", "1::"),
        v("inet", "2001:db8::1/64"),
        v("inet", "2001:db8:0:0:1:0:0:1"),
        v("inet", "::2"),
        v("inet", "fe80::1:0:0:0/10"),
        v("inet", "0.0.0.0/0"),
        v("inet", "1:0:0:2:0:0:0:3"),
        v("inet", "1:0:2:3:4:5:6:7"),
        v("inet", "2001:db8:0:1:1:1:1:1"),
        v("inet", "::ffff:0:0"),
        v("inet", "0:0:0:0:0:1:0:0"),
        v("inet", "1:2:3:4:5:6:7:0"),
        v("cidr", "10.0.0.0/8"),
        v("cidr", "2001:db8::/32"),
        v("cidr", "1.2.3.4/32"),
        v("cidr", "::/0"),
        v("cidr", "::ffff:1.2.3.0/120"),
        v("macaddr", "08:00:2b:01:02:03"),
        v("macaddr8", "08:00:2b:01:02:03:04:05"),
        v("money", "1234.56"),
        v("money", "-0.01"),
        v("money", "0"),
        v("money", "1234567.891"),
        v("money", "92233720368547758.07"),
        v("money", "-92233720368547758.08"),
        v("bit(5)", "10101"),
        v("varbit", ""),
        v("varbit", "1"),
        v("varbit", "10101010101010101"),
        v("pg_lsn", "0/0"),
        v("pg_lsn", "16/B374D848"),
        v("pg_lsn", "FFFFFFFF/FFFFFFFF"),
        v("xml", "<a>é</a>"),
        v("xml", "<?xml version=\"1.0\"?><a/>"),
        v("xml", "plain text"),
        v("xml", "<?xml version=\"1.0\" standalone=\"yes\"?>\n<a/>"),
        v("point", "(1,2)"),
        v("point", "(1.5e300,-0)"),
        v("point", "(NaN,Infinity)"),
        v("point", "(0.1,1e-5)"),
        v("point", "(123456789012345678,1e15)"),
        v("point", "(100000000000000,0.0001)"),
        v("point", "(0.30000000000000004,5e-324)"),
        v("point", "(1e22,1e23)"),
        v("point", "(9007199254740993,-2.5e-7)"),
        v("point", "(5e-324,1.7976931348623157e308)"),
        v("point", "(1e21,-1.23456789e-5)"),
        v("lseg", "[(1,2),(3,4)]"),
        v("box", "(1,2),(3,4)"),
        v("path", "((0,0),(1,1),(2,0))"),
        v("path", "[(0,0),(1.5,1)]"),
        v("polygon", "((0,0),(1,1),(2,0))"),
        v("line", "{1,-1,0.5}"),
        v("circle", "<(1,2),3>"),
        v("tsvector", "a fat:1A cat:2B,3C dog's"),
        v("tsvector", "back\\\\slash:4 x:16383D"),
        v("tsvector", ""),
        v("tid", "(0,1)"),
        v("tid", "(4294967295,65535)"),
        v("xid", "4294967295"),
        v("xid8", "18446744073709551615"),
        v("cid", "7"),
        v("txid_snapshot", "10:20:10,14,15"),
        v("txid_snapshot", "10:10:"),
        v("pg_snapshot", "10:20:10,14,15"),
        v("int2vector", "1 2 -3"),
        v("int2vector", ""),
        v("oidvector", "1 2 4294967295"),
        v("jsonpath", "$.a[*] ? (@ > 1)"),
        v("jsonpath", "strict $.\"é\""),
        v("refcursor", "cur"),
        // arrays of those, as Lists of Strings ...
        v("inet[]", "{1.2.3.4,::1/64}"),
        v("cidr[]", "{10.0.0.0/8}"),
        v("money[]", "{1.5,-2}"),
        v("macaddr[]", "{08:00:2b:01:02:03}"),
        v("bit(3)[]", "{101,010}"),
        v("varbit[]", "{\"\",1}"),
        v("pg_lsn[]", "{0/0,1/2}"),
        e("xml[]", "ARRAY['<a/>'::xml]"),
        v("jsonpath[]", "{$.a,\"$ ? (@ > 1)\"}"),
        // ... or as array_out text
        v("macaddr8[]", "{08:00:2b:01:02:03:04:05,NULL}"),
        v("point[]", "{\"(1,2)\",\"(3,4)\"}"),
        v("point[]", "[0:1]={\"(1,2)\",\"(3,4)\"}"),
        e("box[]", "ARRAY[box '(1,2),(3,4)', box '(0,0),(1,1)']"),
        v("lseg[]", "{\"[(1,2),(3,4)]\"}"),
        v("path[]", "{\"[(0,0),(1,1)]\"}"),
        v("polygon[]", "{\"((0,0),(1,1),(2,0))\"}"),
        v("line[]", "{\"{1,-1,0}\"}"),
        v("circle[]", "{\"<(1,2),3>\"}"),
        e("tsvector[]", "ARRAY['a b:1'::tsvector, ''::tsvector]"),
        v("tid[]", "{\"(0,1)\"}"),
        v("xid[]", "{1,2}"),
        v("cid[]", "{3}"),
        v("xid8[]", "{4}"),
        e("int2vector[]", "ARRAY['1 2'::int2vector]"),
        e("oidvector[]", "ARRAY['3'::oidvector]"),
        v("refcursor[]", "{a,\"b c\",NULL,\"\",null,\"x\\\\y\"}"),
        v("txid_snapshot[]", "{10:20:10}"),
        v("pg_snapshot[]", "{10:20:}"),
        v("refcursor[]", "{{a,b},{c,d}}"),
        // domains arrive under their base type (Type message), see PgOutputDecoder.resolveType
        v("posint", "5"),
        v("label", "x y"));
  }

  /** The send bytes, output text and decoder oid (a domain's base type) of one value. */
  private record Sample(int oid, char typtype, String text, byte[] binary) {}

  /** SQL giving a function's first argument type, or NULL for a pseudo-type. */
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
    char typtype;
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END, t.typtype,"
                    + " t.typoutput::regproc::text, t.typsend::regproc::text,"
                    + " "
                    + argType("t.typoutput")
                    + ", "
                    + argType("t.typsend")
                    + " FROM pg_type t WHERE t.oid = '"
                    + type.replace("'", "''")
                    + "'::regtype")) {
      assertTrue(rs.next(), type);
      oid = rs.getInt(1);
      typtype = rs.getString(2).charAt(0);
      // call each function with its declared argument type unless that is a pseudo-type
      // (anyarray, anyenum): refcursor, for one, has textout/textsend but no implicit cast
      out = rs.getString(3) + "(v" + (rs.getString(5) == null ? "" : "::" + rs.getString(5)) + ")";
      send = rs.getString(4) + "(v" + (rs.getString(6) == null ? "" : "::" + rs.getString(6)) + ")";
    }
    assertTrue(!send.startsWith("-("), type + " has no send function");
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
      return new Sample(oid, typtype, rs.getString(1), rs.getBytes(2));
    }
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("values")
  void binaryDecodesToTheTextDecodersValue(String type, String expression) throws SQLException {
    Sample s = sample(type, expression);
    assertTrue(PgBinaryValues.supports(s.oid()), type + " oid " + s.oid());
    Object fromText = PgTextValues.decode(s.oid(), s.text());
    Object fromBinary = PgBinaryValues.decode(s.oid(), s.binary());
    assertSameValue(fromText, fromBinary, type + " " + expression + " text=" + s.text());
  }

  /** Equal values of the same class; byte arrays by content; Lists element by element. */
  static void assertSameValue(Object expected, Object actual, String what) {
    if (expected == null || actual == null) {
      assertEquals(expected, actual, what);
      return;
    }
    if (expected instanceof List<?> l) {
      assertTrue(actual instanceof List<?>, what + ": not a List but " + actual.getClass());
      List<?> a = (List<?>) actual;
      assertEquals(l.size(), a.size(), what + ": list size");
      for (int i = 0; i < l.size(); i++) {
        assertSameValue(l.get(i), a.get(i), what + " [" + i + "]");
      }
      return;
    }
    assertEquals(expected.getClass(), actual.getClass(), what);
    if (expected instanceof byte[] b) {
      assertArrayEquals(b, (byte[]) actual, what);
    } else {
      assertEquals(expected, actual, what);
      if (expected instanceof BigDecimal d) {
        assertEquals(d.scale(), ((BigDecimal) actual).scale(), what + ": scale");
      }
    }
  }

  @Test
  void enumLabelsAreSentAsTextButTheEnumOidIsNotDecodable() throws SQLException {
    for (String label : List.of("sad", "très bien")) {
      Sample s = sample("mood", "'" + label + "'");
      assertEquals('e', s.typtype());
      assertEquals(label, PgTextValues.decode(s.oid(), s.text()));
      // enum_send sends the label as textsend would: decodable as text by a caller that knows
      assertEquals(label, PgBinaryValues.decode(PgBuiltinType.TEXT.oid(), s.binary()));
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> PgBinaryValues.decode(s.oid(), s.binary()));
      assertTrue(e.getMessage().contains("type oid " + s.oid()), e.getMessage());
      assertTrue(!PgBinaryValues.supports(s.oid()));
    }
  }

  static Stream<Arguments> unsupported() {
    return Stream.of(
        v("mood[]", "{sad,ok}"),
        v("pair", "(1,x)"),
        v("int4range", "[1,10)"),
        v("int4multirange", "{[1,2)}"),
        v("tsquery", "a & b"),
        v("regclass", "pg_class"),
        v("regtype", "int4"),
        v("pair[]", "{\"(1,x)\"}"),
        v("int4range[]", "{\"[1,2)\"}"),
        v("posint[]", "{1,2}"));
  }

  /** Types this decoder cannot render: a clear IllegalArgumentException naming the type oid. */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("unsupported")
  void unsupportedTypesAreRejectedNamingTheOid(String type, String expression) throws SQLException {
    Sample s = sample(type, expression);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> PgBinaryValues.decode(s.oid(), s.binary()));
    assertTrue(
        e.getMessage().contains("type oid " + Integer.toUnsignedString(s.oid())), e.getMessage());
    assertTrue(!PgBinaryValues.supports(s.oid()), type);
  }

  /**
   * PostgreSQL 17's infinite intervals: both decoders give PgInterval.INFINITY / NEGATIVE_INFINITY.
   */
  @Test
  void infiniteIntervalsDecodeToTheInfiniteConstants() throws SQLException {
    for (String literal : List.of("infinity", "-infinity")) {
      Sample s = sample("interval", "'" + literal + "'");
      assertEquals(literal, s.text());
      PgInterval expected =
          literal.startsWith("-") ? PgInterval.NEGATIVE_INFINITY : PgInterval.INFINITY;
      assertEquals(expected, PgTextValues.decode(s.oid(), s.text()));
      assertEquals(expected, PgBinaryValues.decode(s.oid(), s.binary()));
      assertEquals(literal, expected.toIso8601());
      assertTrue(expected.isInfinite());
    }
  }

  /** Every row of the builtin type table holds the server's oid, array type and delimiter. */
  @Test
  void builtinTypeTableMatchesTheCatalog() throws SQLException {
    Map<String, int[]> catalog = new HashMap<>();
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT t.typname, t.oid, t.typarray, ascii(t.typdelim::text) FROM pg_type t"
                    + " WHERE t.typnamespace = 'pg_catalog'::regnamespace")) {
      while (rs.next()) {
        catalog.put(rs.getString(1), new int[] {rs.getInt(2), rs.getInt(3), rs.getInt(4)});
      }
    }
    for (PgBuiltinType type : PgBuiltinType.values()) {
      int[] row = catalog.get(type.typname());
      assertNotNull(row, type.typname() + " is not in pg_type");
      assertEquals(row[0], type.oid(), type.typname() + " oid");
      assertEquals(row[1], type.arrayOid(), type.typname() + " typarray");
      assertEquals((char) row[2], type.delimiter(), type.typname() + " typdelim");
      assertEquals(type, PgBuiltinType.of(type.oid()));
      if (type.arrayOid() != 0) {
        assertEquals(type, PgBuiltinType.elementOf(type.arrayOid()));
      }
    }
  }

  /**
   * {@link PgFloatOutput} (used for geometric types) against the server's {@code float8out} for
   * random bit patterns, integers around 2^53, powers of ten and their neighbours, and subnormals.
   */
  @Test
  void float8OutputMatchesTheServerForManyDoubles() throws SQLException {
    Random random = new Random(20261130L);
    List<Double> doubles = new ArrayList<>();
    while (doubles.size() < 4000) {
      double d = Double.longBitsToDouble(random.nextLong());
      if (!Double.isNaN(d)) {
        doubles.add(d);
      }
    }
    for (int e = -325; e <= 308; e++) {
      double d = Double.parseDouble("1e" + e);
      doubles.add(d);
      doubles.add(Math.nextUp(d));
      doubles.add(Math.nextDown(d));
      doubles.add(-d);
    }
    for (long n = (1L << 53) - 20; n < (1L << 53) + 20; n++) {
      doubles.add((double) n);
      doubles.add(n / 1000.0);
    }
    for (int i = 0; i < 500; i++) {
      doubles.add(random.nextInt(2_000_000) / 1000.0);
      doubles.add(Double.longBitsToDouble(random.nextLong() & 0x000F_FFFF_FFFF_FFFFL)); // subnormal
    }
    doubles.add(Double.MAX_VALUE);
    doubles.add(Double.MIN_VALUE);
    doubles.add(Double.MIN_NORMAL);
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT float8send(x), textin(float8out(x)) FROM unnest(?::float8[]) x")) {
      ps.setArray(1, connection.createArrayOf("float8", doubles.toArray()));
      int checked = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          double d = ByteBuffer.wrap(rs.getBytes(1)).getDouble();
          assertEquals(rs.getString(2), PgFloatOutput.format(d), Double.toString(d));
          checked++;
        }
      }
      assertEquals(doubles.size(), checked);
    }
  }

  /** Sanity check of the comparison itself: differing values are told apart. */
  @Test
  void comparisonDistinguishesScaleAndClass() {
    assertThrows(
        AssertionError.class,
        () -> assertSameValue(new BigDecimal("12.340"), new BigDecimal("12.34"), "scale"));
    assertThrows(AssertionError.class, () -> assertSameValue((short) 1, 1, "class"));
    assertThrows(
        AssertionError.class,
        () -> assertSameValue(List.of(new byte[] {1}), List.of(new byte[] {2}), "bytes"));
    assertThrows(AssertionError.class, () -> assertSameValue(-0.0d, 0.0d, "negative zero"));
    assertSameValue(List.of(new byte[] {1}), List.of(new byte[] {1}), "same bytes");
  }
}
