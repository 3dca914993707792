package io.datum.cdc.core.types;

import static io.datum.cdc.core.types.PgBinaryValuesEquivalenceTest.assertSameValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.PgInterval;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Property tests with the server as the oracle: values generated from a seeded {@link Random} (edge
 * characters such as quotes, backslashes, commas, braces, parentheses, U+2028, control characters,
 * empty strings, NULL elements; BC, infinite and extreme dates and times; NaN and infinite
 * numbers), rendered by a real PostgreSQL 17 through the type's output function (its text, as
 * pgoutput sends it in text mode) and its send function (its binary form). For each value:
 *
 * <ul>
 *   <li>the text decoder's value equals the generated value where it has a Java form (the server's
 *       own reading of the input);
 *   <li>the text decoder's value equals the binary decoder's (one mapping for both formats);
 *   <li>where the binary form is rendered as text (composites, ranges, multiranges, geometric
 *       types, money, bit strings), the rendering equals the server's output text exactly.
 * </ul>
 *
 * <p>The decoders are those the source uses: {@link PgTextValues} and {@link PgBinaryValues} for
 * builtin types, the codecs of {@link PgTypeCatalog} for the others (in both formats). A failure
 * message names the seed, the type and the value. One server for the class.
 */
@EmbeddedPostgresTest
class PgTextPropertyTest {

  private static final int N = 300;

  /** Characters PostgreSQL's parsers treat specially, or that Java treats differently. */
  private static final String EDGE =
      "\"\\,{}()[]; \t\n\r\u000b\f\u2028\u2029\u001f\u001c\u00a0é€😀";

  private static Connection connection;
  private static EmbeddedPostgresServer server;
  private static PgTypeCatalog catalog;
  private static final Map<String, String[]> FUNCTIONS = new HashMap<>();

  @BeforeAll
  static void setUp(EmbeddedPostgresServer pg) throws SQLException {
    server = pg;
    pg.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'très bien', 'a,b', 'NULL', '', 'x\"y',"
            + " 'b\\\\s', ' lead', '{br}', U&'\\2028')",
        "CREATE DOMAIN posint AS int CHECK (VALUE > 0)",
        "CREATE DOMAIN word AS text",
        "CREATE TYPE pair AS (a int, b text)",
        "CREATE TYPE nest AS (p pair, t text[], m mood)",
        "CREATE TYPE textrange AS RANGE (subtype = text, collation = \"C\")");
    connection = pg.getConnection();
    ReplicationSessionSettings.apply(connection);
    catalog = new PgTypeCatalog(server::getConnection);
    catalog.timeZone("Europe/Amsterdam");
  }

  @AfterAll
  static void tearDown() throws SQLException {
    if (connection != null) {
      connection.close();
    }
  }

  // ---- generators ------------------------------------------------------------------------------

  /** A string of 0 to 8 characters, mostly edge characters, sometimes the word NULL. */
  private static String edgeString(Random r) {
    switch (r.nextInt(12)) {
      case 0:
        return "";
      case 1:
        return r.nextBoolean() ? "NULL" : "null";
      case 2:
        return " " + (char) ('a' + r.nextInt(26)) + " ";
      default:
        break;
    }
    int n = 1 + r.nextInt(8);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (r.nextInt(3) == 0) {
        sb.append((char) ('a' + r.nextInt(26)));
      } else {
        sb.appendCodePoint(EDGE.codePoints().toArray()[r.nextInt((int) EDGE.codePoints().count())]);
      }
    }
    return sb.toString();
  }

  // ---- the oracle ------------------------------------------------------------------------------

  /** The server's output text and send bytes of one value, and the type's oid. */
  private record Sample(int oid, String text, byte[] binary) {}

  /** {typoutput, typsend, oid} of a type, with a domain's base type for pseudo-type arguments. */
  private static String[] functions(String type) throws SQLException {
    String[] f = FUNCTIONS.get(type);
    if (f != null) {
      return f;
    }
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT t.typoutput::regproc::text, t.typsend::regproc::text, t.oid::int8"
                    + " FROM pg_type t WHERE t.oid = '"
                    + type
                    + "'::regtype")) {
      assertTrue(rs.next(), type);
      f = new String[] {rs.getString(1), rs.getString(2), Long.toString(rs.getLong(3))};
    }
    FUNCTIONS.put(type, f);
    return f;
  }

  /**
   * Evaluates {@code expression} (with {@code ?} parameters) as {@code type} and returns its output
   * text and send bytes, as pgoutput would send them.
   */
  private static Sample sample(String type, String expression, Object... params)
      throws SQLException {
    String[] f = functions(type);
    String sql =
        "SELECT textin("
            + f[0]
            + "(v)), "
            + f[1]
            + "(v) FROM (SELECT ("
            + expression
            + ")::"
            + type
            + " AS v) x";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        Object p = params[i];
        if (p == null) {
          ps.setNull(i + 1, Types.VARCHAR);
        } else if (p instanceof String s) {
          ps.setString(i + 1, s);
        } else if (p instanceof Long l) {
          ps.setLong(i + 1, l);
        } else if (p instanceof Integer n) {
          ps.setInt(i + 1, n);
        } else if (p instanceof Double d) {
          ps.setDouble(i + 1, d);
        } else if (p instanceof Float d) {
          ps.setFloat(i + 1, d);
        } else if (p instanceof byte[] b) {
          ps.setBytes(i + 1, b);
        } else {
          throw new IllegalArgumentException("parameter " + p);
        }
      }
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        return new Sample(Integer.parseUnsignedInt(f[2]), rs.getString(1), rs.getBytes(2));
      }
    }
  }

  /** The value text mode gives: the builtin decoders for their oids, else the catalog's codec. */
  private static Object fromText(Sample s) {
    return PgBinaryValues.supports(s.oid())
        ? PgTextValues.decode(s.oid(), s.text())
        : codec(s.oid()).textValue(s.text());
  }

  private static Object fromBinary(Sample s) {
    return PgBinaryValues.supports(s.oid())
        ? PgBinaryValues.decode(s.oid(), s.binary())
        : codec(s.oid()).value(s.binary(), 0, s.binary().length);
  }

  /** The binary form rendered as the output function prints it. */
  private static String rendered(Sample s) {
    PgBinaryCursor c = new PgBinaryCursor(s.binary(), 0, s.binary().length);
    return PgBinaryValues.supports(s.oid())
        ? PgBinaryOutput.text(s.oid(), c, java.time.ZoneId.of("Europe/Amsterdam"))
        : codec(s.oid()).text(c);
  }

  private static PgBinaryCodec codec(int oid) {
    catalog.prepare(new int[] {oid});
    return catalog.codec(oid);
  }

  /**
   * Checks one value: text and binary decode alike, the rendering is the server's text, and (if
   * {@code expected} is not {@link #ANY}) the decoded value is {@code expected}.
   */
  private static void check(String what, Sample s, Object expected) {
    String where = what + " text=" + printable(s.text());
    Object text = fromText(s);
    assertSameValue(text, fromBinary(s), where + ": text vs binary");
    assertEquals(s.text(), rendered(s), where + ": binary rendered vs the server's text");
    if (expected != ANY) {
      assertSameValue(expected, text, where + ": decoded vs generated");
    }
  }

  private static final Object ANY = new Object();

  private static String printable(String s) {
    StringBuilder sb = new StringBuilder();
    s.codePoints()
        .forEach(
            c -> {
              if (c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029) {
                sb.append(String.format("\\u%04x", c));
              } else {
                sb.appendCodePoint(c);
              }
            });
    return sb.toString();
  }

  /** {@code ARRAY[?, ...]::type}, or the empty array. */
  private static String arrayOf(int n, String elementCast) {
    if (n == 0) {
      return "'{}'";
    }
    return "ARRAY[" + String.join(", ", Collections.nCopies(n, "?" + elementCast)) + "]";
  }

  // ---- the properties --------------------------------------------------------------------------

  @Test
  void textArraysWithEdgeCharactersDecodeToTheGeneratedElements() throws SQLException {
    Random r = new Random(1201);
    for (int k = 0; k < N; k++) {
      int n = r.nextInt(6);
      List<Object> elements = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        elements.add(r.nextInt(6) == 0 ? null : edgeString(r));
      }
      String expression = arrayOf(n, "::text");
      if (n > 0 && r.nextInt(4) == 0) {
        // a lower bound other than 1 prints as a [lo:hi]= decoration, which the decoders drop
        expression = "'[-3:-3]={\"lo w\"}'::text[] || " + expression;
        elements.add(0, "lo w");
      }
      Sample s =
          sample(
              "text[]",
              expression,
              elements
                  .subList(n > 0 && expression.startsWith("'[") ? 1 : 0, elements.size())
                  .toArray());
      check("seed 1201 #" + k + " text[] " + elements, s, elements);
    }
  }

  @Test
  void twoDimensionalArraysAndBoundsDecodeToNestedLists() throws SQLException {
    Random r = new Random(1202);
    for (int k = 0; k < N; k++) {
      int rows = 1 + r.nextInt(3);
      int cols = 1 + r.nextInt(3);
      List<Object> expected = new ArrayList<>();
      List<Object> flat = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        List<Object> row = new ArrayList<>();
        for (int j = 0; j < cols; j++) {
          String e = r.nextInt(5) == 0 ? null : edgeString(r);
          row.add(e);
          flat.add(e);
        }
        expected.add(row);
      }
      StringBuilder sql = new StringBuilder("ARRAY[");
      for (int i = 0; i < rows; i++) {
        sql.append(i == 0 ? "" : ", ").append("ARRAY[");
        sql.append(String.join(", ", Collections.nCopies(cols, "?::text"))).append(']');
      }
      sql.append(']');
      String expression = sql.toString();
      Sample s = sample("text[]", expression, flat.toArray());
      check("seed 1202 #" + k + " text[][] " + expected, s, expected);
    }
  }

  @Test
  void enumAndDomainArraysDecodeToListsInBothFormats() throws SQLException {
    String[] labels = {
      "sad", "ok", "très bien", "a,b", "NULL", "", "x\"y", "b\\\\s", " lead", "{br}", "\u2028"
    };
    Random r = new Random(1203);
    for (int k = 0; k < N; k++) {
      int n = r.nextInt(5);
      List<Object> moods = new ArrayList<>();
      List<Object> ints = new ArrayList<>();
      List<Object> words = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        moods.add(r.nextInt(5) == 0 ? null : labels[r.nextInt(labels.length)]);
        ints.add(r.nextInt(5) == 0 ? null : 1 + r.nextInt(Integer.MAX_VALUE));
        words.add(r.nextInt(5) == 0 ? null : edgeString(r));
      }
      check(
          "seed 1203 #" + k + " mood[] " + moods,
          sample("mood[]", arrayOf(n, "::text::mood"), moods.toArray()),
          moods);
      List<Object> intParams = new ArrayList<>();
      for (Object o : ints) {
        intParams.add(o == null ? null : o.toString());
      }
      check(
          "seed 1203 #" + k + " posint[] " + ints,
          sample("posint[]", arrayOf(n, "::text::int::posint"), intParams.toArray()),
          ints);
      check(
          "seed 1203 #" + k + " word[] " + words,
          sample("word[]", arrayOf(n, "::text::word"), words.toArray()),
          words);
    }
  }

  @Test
  void compositesAndTheirArraysRenderAsRecordOutAndDecodeToLists() throws SQLException {
    Random r = new Random(1204);
    for (int k = 0; k < N; k++) {
      String b = r.nextInt(6) == 0 ? null : edgeString(r);
      String a = r.nextInt(6) == 0 ? null : Integer.toString(r.nextInt());
      Sample pair = sample("pair", "ROW(?::text::int, ?::text)", a, b);
      check("seed 1204 #" + k + " pair (" + a + ", " + b + ")", pair, pair.text());
      String t1 = r.nextInt(4) == 0 ? null : edgeString(r);
      Sample nest =
          sample(
              "nest",
              "ROW(ROW(?::text::int, ?::text)::pair, ARRAY[?::text, NULL], 'a,b')",
              a,
              b,
              t1);
      check("seed 1204 #" + k + " nest", nest, nest.text());
      // pair[]: a List of the elements' record_out text, as the server prints each element
      int n = r.nextInt(4);
      List<Object> params = new ArrayList<>();
      StringBuilder sql = new StringBuilder(n == 0 ? "'{}'" : "ARRAY[");
      for (int i = 0; i < n; i++) {
        sql.append(i == 0 ? "" : ", ");
        if (r.nextInt(4) == 0) {
          sql.append("NULL::pair");
        } else {
          sql.append("ROW(?::text::int, ?::text)::pair");
          params.add(r.nextBoolean() ? null : Integer.toString(r.nextInt(100)));
          params.add(r.nextInt(5) == 0 ? null : edgeString(r));
        }
      }
      if (n > 0) {
        sql.append(']');
      }
      Sample array = sample("pair[]", sql.toString(), params.toArray());
      check("seed 1204 #" + k + " pair[]", array, elementTexts("pair[]", sql.toString(), params));
    }
  }

  /** The server's output text of each element of an array expression (null for NULL). */
  private static List<Object> elementTexts(String type, String expression, List<Object> params)
      throws SQLException {
    String sql =
        "WITH a AS (SELECT ("
            + expression
            + ")::"
            + type
            + " AS v) SELECT a.v[i]::text FROM a, generate_subscripts(a.v, 1) i ORDER BY i";
    List<Object> texts = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      for (int i = 0; i < params.size(); i++) {
        ps.setString(i + 1, (String) params.get(i));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          texts.add(rs.getString(1));
        }
      }
    }
    return texts;
  }

  @Test
  void rangesAndMultirangesRenderAsRangeOut() throws SQLException {
    Random r = new Random(1205);
    String[] bounds = {"[]", "[)", "(]", "()"};
    for (int k = 0; k < N; k++) {
      String kind = bounds[r.nextInt(4)];
      String lo = r.nextInt(5) == 0 ? null : edgeString(r);
      String hi = r.nextInt(5) == 0 ? null : edgeString(r);
      Sample tr =
          sample(
              "textrange",
              "CASE WHEN ?::text COLLATE \"C\" > ?::text COLLATE \"C\" THEN 'empty'::textrange"
                  + " ELSE textrange(?::text, ?::text, ?) END",
              lo,
              hi,
              lo,
              hi,
              kind);
      check("seed 1205 #" + k + " textrange " + lo + " " + hi, tr, tr.text());
      long a = r.nextInt(2000) - 1000;
      long b = a + r.nextInt(50);
      Object[] int8 = r.nextInt(6) == 0 ? new Object[] {b, kind} : new Object[] {a, b, kind};
      check(
          "seed 1205 #" + k + " int8range",
          sample(
              "int8range",
              int8.length == 2 ? "int8range(NULL, ?::int8, ?)" : "int8range(?::int8, ?::int8, ?)",
              int8),
          ANY);
      String numA = new BigDecimal(r.nextGaussian() * 1000).setScale(r.nextInt(5), 0).toString();
      check(
          "seed 1205 #" + k + " numrange " + numA,
          sample("numrange", "numrange(?::numeric, NULL, ?)", numA, kind),
          ANY);
      long micros = r.nextLong() % 9_000_000_000_000_000L / 1000;
      check(
          "seed 1205 #" + k + " tstzrange " + micros,
          sample(
              "tstzrange",
              "tstzrange('2000-01-01 00:00+00'::timestamptz"
                  + " + make_interval(secs => ?::int8 / 1000000.0), 'infinity', ?)",
              micros,
              kind),
          ANY);
      int c1 = r.nextInt(100);
      int c2 = c1 + r.nextInt(10);
      int c3 = c2 + r.nextInt(10);
      check(
          "seed 1205 #" + k + " int4multirange",
          sample(
              "int4multirange",
              "int4multirange(int4range(?::int4, ?::int4), int4range(?::int4, NULL))",
              c1,
              c2,
              c3),
          ANY);
      check(
          "seed 1205 #" + k + " textrange[]",
          sample("textrange[]", "ARRAY[textrange(?::text, NULL), 'empty', NULL]", lo),
          ANY);
    }
  }

  @Test
  void timestampsDatesAndTimesDecodeToTheGeneratedInstantsInBothFormats() throws SQLException {
    Random r = new Random(1206);
    // timestamp's range: 4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999999 (datetime.h)
    long min = -211_813_488_000_000_000L + 86_400_000_000L;
    long max = 9_223_371_331_199_999_999L;
    LocalDateTime epoch = LocalDateTime.of(2000, 1, 1, 0, 0);
    for (int k = 0; k < N; k++) {
      long micros =
          switch (r.nextInt(6)) {
            case 0 -> min + (long) (r.nextDouble() * 1e17);
            case 1 -> max - (long) (r.nextDouble() * 1e17);
            case 2 -> (long) (r.nextGaussian() * 3e15); // around 1905..2095
            default -> min + (long) (r.nextDouble() * ((double) max - (double) min));
          };
      micros = Math.max(min, Math.min(max, micros));
      LocalDateTime expected = epoch.plus(micros, ChronoUnit.MICROS);
      String interval = micros + " microseconds";
      check(
          "seed 1206 #" + k + " timestamp " + expected,
          sample("timestamp", "'2000-01-01'::timestamp + ?::interval", interval),
          expected);
      Instant instant = expected.toInstant(ZoneOffset.UTC);
      check(
          "seed 1206 #" + k + " timestamptz " + instant,
          sample("timestamptz", "'2000-01-01 00:00+00'::timestamptz + ?::interval", interval),
          instant);
      int days = (int) Math.floorDiv(micros, 86_400_000_000L);
      check(
          "seed 1206 #" + k + " date",
          sample("date", "'2000-01-01'::date + ?::int4", days),
          LocalDate.of(2000, 1, 1).plusDays(days));
      long timeMicros = Math.floorMod(micros, 86_400_000_000L);
      check(
          "seed 1206 #" + k + " time",
          sample("time", "'00:00'::time + ?::interval", timeMicros + " microseconds"),
          LocalTime.ofNanoOfDay(timeMicros * 1000));
      int offsetSeconds = (r.nextInt(2 * 57_599 + 1) - 57_599) / (r.nextBoolean() ? 60 : 1);
      offsetSeconds = r.nextBoolean() ? offsetSeconds - offsetSeconds % 60 : offsetSeconds;
      ZoneOffset offset = ZoneOffset.ofTotalSeconds(offsetSeconds);
      String tz = LocalTime.ofNanoOfDay(timeMicros * 1000) + offset.getId().replace("Z", "+00");
      check(
          "seed 1206 #" + k + " timetz " + tz,
          sample("timetz", "?::text::timetz", tz),
          java.time.OffsetTime.of(LocalTime.ofNanoOfDay(timeMicros * 1000), offset));
    }
    for (String special : List.of("infinity", "-infinity")) {
      check(special, sample("timestamp", "?::text", special), ANY);
      check(special, sample("timestamptz", "?::text", special), ANY);
      check(special, sample("date", "?::text", special), ANY);
    }
    check("date max", sample("date", "'5874897-12-31'"), LocalDate.of(5874897, 12, 31));
    check("date min", sample("date", "'4714-11-24 BC'"), LocalDate.of(-4713, 11, 24));
    check(
        "timestamp max",
        sample("timestamp", "'294276-12-31 23:59:59.999999'"),
        LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000));
    check("24:00", sample("time", "'24:00:00'"), LocalTime.MAX);
    check("24:00tz", sample("timetz", "'24:00:00-15:59:59'"), ANY);
    check(
        "LMT second offset",
        sample("timestamptz", "'1850-01-01 00:00:00+00'"),
        Instant.parse("1850-01-01T00:00:00Z"));
  }

  @Test
  void intervalsDecodeToTheGeneratedFieldsInBothFormats() throws SQLException {
    Random r = new Random(1207);
    for (int k = 0; k < N; k++) {
      int months = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(400) - 200;
      int days = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(400) - 200;
      long micros =
          switch (r.nextInt(4)) {
            case 0 -> r.nextLong();
            case 1 -> r.nextInt(2_000_000) - 1_000_000L;
            case 2 -> 0;
            default -> (long) (r.nextGaussian() * 1e12);
          };
      if (micros == Long.MIN_VALUE || micros == Long.MAX_VALUE) {
        micros = 0; // PostgreSQL 17's -infinity and infinity
      }
      Sample s =
          sample(
              "interval",
              "make_interval(months => ?::int4, days => ?::int4) + ?::text::interval",
              months,
              days,
              micros + " microseconds");
      check(
          "seed 1207 #" + k + " interval " + months + "/" + days + "/" + micros,
          s,
          new PgInterval(months, days, micros));
    }
    check("infinity", sample("interval", "'infinity'"), PgInterval.INFINITY);
    check("-infinity", sample("interval", "'-infinity'"), PgInterval.NEGATIVE_INFINITY);
  }

  @Test
  void numbersDecodeToTheGeneratedValuesInBothFormats() throws SQLException {
    Random r = new Random(1208);
    for (int k = 0; k < N; k++) {
      String digits =
          new java.math.BigInteger(1 + r.nextInt(120), r).toString()
              + (r.nextBoolean() ? "" : "0".repeat(r.nextInt(5)));
      int scale = r.nextInt(40) - 5;
      BigDecimal d = new BigDecimal(new java.math.BigInteger(digits), Math.max(0, scale));
      if (r.nextBoolean()) {
        d = d.negate();
      }
      String text = d.toPlainString();
      check("seed 1208 #" + k + " numeric " + text, sample("numeric", "?::numeric", text), d);
      double f8 = Double.longBitsToDouble(r.nextLong());
      check("seed 1208 #" + k + " float8 " + f8, sample("float8", "?::float8", f8), f8);
      float f4 = Float.intBitsToFloat(r.nextInt());
      check("seed 1208 #" + k + " float4 " + f4, sample("float4", "?::float4", f4), f4);
      long cents = r.nextLong() / (r.nextBoolean() ? 1 : 1_000_000);
      String money = BigDecimal.valueOf(cents, 2).toPlainString();
      check(
          "seed 1208 #" + k + " money " + money, sample("money", "?::numeric::money", money), ANY);
      int bits = r.nextInt(70);
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < bits; i++) {
        b.append(r.nextBoolean() ? '1' : '0');
      }
      check("seed 1208 #" + k + " varbit " + b, sample("varbit", "?::varbit", b.toString()), ANY);
      byte[] bytes = new byte[r.nextInt(20)];
      r.nextBytes(bytes);
      check("seed 1208 #" + k + " bytea", sample("bytea", "?::bytea", bytes), bytes);
    }
    // "char": one byte; charout prints bytes >= 128 as \ooo since PostgreSQL 15 (char.c)
    for (int b = 1; b < 256; b++) {
      check("\"char\" " + b, sample("\"char\"", "?::int4::\"char\"", b > 127 ? b - 256 : b), ANY);
    }
    for (String special : List.of("NaN", "Infinity", "-Infinity")) {
      check(special, sample("numeric", "?::numeric", special), ANY);
      check(special, sample("float8", "?::float8", special), ANY);
      check(special, sample("float4", "?::float4", special), ANY);
    }
    check("-0", sample("float8", "'-0'::float8"), -0.0);
    check("money min", sample("money", "'-92233720368547758.08'::money"), ANY);
    check("money max", sample("money", "'92233720368547758.07'::money"), ANY);
  }

  private static boolean moderate(Object[] values, int n) {
    for (int i = 0; i < n; i++) {
      double v = Math.abs((double) values[i]);
      if (v != 0 && (v < 1e-100 || v > 1e100)) {
        return false;
      }
    }
    return true;
  }

  @Test
  void geometricTypesRenderAsTheServerPrintsThem() throws SQLException {
    Random r = new Random(1209);
    for (int k = 0; k < N; k++) {
      Object[] xy = new Object[8];
      for (int i = 0; i < xy.length; i++) {
        xy[i] =
            switch (r.nextInt(8)) {
              case 0 -> Double.longBitsToDouble(r.nextLong() & 0x7fef_ffff_ffff_ffffL);
              case 1 -> -0.0;
              case 2 -> (double) r.nextInt(100);
              default -> r.nextGaussian() * Math.pow(10, r.nextInt(40) - 20);
            };
      }
      String what = "seed 1209 #" + k + " " + Arrays.toString(xy);
      check(what + " point", sample("point", "point(?::float8, ?::float8)", xy[0], xy[1]), ANY);
      check(
          what + " box",
          sample(
              "box",
              "box(point(?::float8, ?::float8), point(?::float8, ?::float8))",
              xy[0],
              xy[1],
              xy[2],
              xy[3]),
          ANY);
      check(
          what + " lseg",
          sample(
              "lseg",
              "lseg(point(?::float8, ?::float8), point(?::float8, ?::float8))",
              xy[0],
              xy[1],
              xy[2],
              xy[3]),
          ANY);
      String points = "((" + xy[0] + "," + xy[1] + "),(" + xy[2] + "," + xy[3] + "))";
      check(what + " path", sample("path", "?::text::path", points), ANY);
      check(what + " open path", sample("path", "popen(?::text::path)", points), ANY);
      check(what + " polygon", sample("polygon", "?::text::polygon", points), ANY);
      check(
          what + " circle",
          sample(
              "circle", "circle(point(?::float8, ?::float8), abs(?::float8))", xy[0], xy[1], xy[4]),
          ANY);
      // line_construct_pp refuses points within EPSILON (1e-6, geo_decls.h) of each other, and
      // its arithmetic fails on underflow and overflow (float8_mi, float8_div)
      if (moderate(xy, 4)
          && (Math.abs((double) xy[0] - (double) xy[2]) > 1
              || Math.abs((double) xy[1] - (double) xy[3]) > 1)) {
        check(
            what + " line",
            sample(
                "line",
                "line(point(?::float8, ?::float8), point(?::float8, ?::float8))",
                xy[0],
                xy[1],
                xy[2],
                xy[3]),
            ANY);
      }
    }
  }
}
