package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.data.ConnectSchema;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * End to end against PostgreSQL 17: a table with a column of every type the library decodes is
 * streamed in text and in binary mode, converted with {@link ChangeRecords} from the library's
 * column metadata alone, and every Connect value is compared with what PostgreSQL itself computes
 * from the row ({@code extract(epoch ...)}, {@code to_char}, casts), every Struct is validated
 * against its schema and goes through Connect's JsonConverter and back unchanged.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChangeRecordsPostgresTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");

  /** Each column with the SQL that gives its expected Connect value from the row. */
  private static final Map<String, String> ORACLE = new LinkedHashMap<>();

  static {
    ORACLE.put("id", "id");
    ORACLE.put("i2", "i2");
    ORACLE.put("i4", "i4");
    ORACLE.put("i8", "i8");
    ORACLE.put("o", "o::int8");
    ORACLE.put("f4", "f4");
    ORACLE.put("f8", "f8");
    ORACLE.put("n", "n::text");
    ORACLE.put("n52", "n52::text");
    ORACLE.put("b", "b");
    ORACLE.put("t", "t");
    ORACLE.put("vc", "vc");
    ORACLE.put("c", "c");
    ORACLE.put("nm", "nm::text");
    ORACLE.put("ch", "ch::text");
    ORACLE.put("by", "by");
    ORACLE.put("u", "u::text");
    ORACLE.put("j", "j::text");
    ORACLE.put("jb", "jb::text");
    ORACLE.put("x", "x::text");
    ORACLE.put("m", "m::text");
    ORACLE.put(
        "d",
        "CASE WHEN isfinite(d) THEN d - date '1970-01-01'"
            + " WHEN d > 'epoch' THEN -2147472692 WHEN d < 'epoch' THEN -2147472691 END");
    ORACLE.put("tm", "(extract(epoch FROM tm) * 1000000)::int8");
    ORACLE.put("tm3", "(extract(epoch FROM tm3) * 1000)::int4");
    ORACLE.put("ttz", "(ttz AT TIME ZONE 'UTC')::time::text || 'Z'");
    ORACLE.put(
        "ts",
        "CASE WHEN isfinite(ts) THEN (extract(epoch FROM ts) * 1000000)::int8"
            + " WHEN ts > 'epoch' THEN 9223372036825200000 WHEN ts < 'epoch' THEN -9223372036832400000 END");
    ORACLE.put("ts3", "(extract(epoch FROM ts3) * 1000)::int8");
    ORACLE.put(
        "tstz",
        "CASE WHEN isfinite(tstz) THEN"
            + " to_char(tstz AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
            + " ELSE tstz::text END");
    ORACLE.put("tstz3", "to_char(tstz3 AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')");
    // Debezium's MicroDuration from PGInterval's fields: months, days, then h:m:s
    ORACLE.put(
        "iv",
        "((((extract(year FROM iv) * 12 + extract(month FROM iv)) * (365.25 / 12)"
            + " + extract(day FROM iv)) * 86400 + extract(hour FROM iv) * 3600"
            + " + extract(minute FROM iv) * 60 + extract(second FROM iv)) * 1000000)::float8");
    ORACLE.put("mn", "mn::text");
    ORACLE.put("ip", "ip::text");
    ORACLE.put("pt", "pt::text");
    ORACLE.put("r", "r::text");
    ORACLE.put("cp", "cp::text");
    ORACLE.put("pi", "pi::int4");
    ORACLE.put("pr", "pr::text");
    ORACLE.put("ai", "ai");
    ORACLE.put("at", "at");
    ORACLE.put("an", "an::text[]");
    ORACLE.put("am", "am::text[]");
    ORACLE.put("api", "api::int4[]");
    ORACLE.put(
        "ad",
        "CASE WHEN ad IS NOT NULL THEN ARRAY(SELECT x - date '1970-01-01'"
            + " FROM unnest(ad) WITH ORDINALITY AS u(x, o) ORDER BY o) END");
    ORACLE.put("ar", "ar::text[]");
    ORACLE.put("acp", "acp::text[]");
    ORACLE.put("m2", "m2");
    ORACLE.put("big", "big");
  }

  private static final String[] SCHEMA = {
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'très bien')",
    "CREATE DOMAIN posint AS int CHECK (VALUE > 0)",
    "CREATE DOMAIN price AS numeric(8,2)",
    "CREATE TYPE pair AS (a int, b text)",
    "CREATE TABLE every_type (id int PRIMARY KEY, i2 int2, i4 int4, i8 int8, o oid, f4 float4,"
        + " f8 float8, n numeric, n52 numeric(5,2), b bool, t text, vc varchar(10), c char(3),"
        + " nm name, ch \"char\", by bytea, u uuid, j json, jb jsonb, x xml, m mood, d date,"
        + " tm time, tm3 time(3), ttz timetz, ts timestamp, ts3 timestamp(3), tstz timestamptz,"
        + " tstz3 timestamptz(3), iv interval, mn money, ip inet, pt point, r int4range,"
        + " cp pair, pi posint, pr price, ai int[], at text[], an numeric(6,1)[], am mood[],"
        + " api posint[], ad date[], ar int4range[], acp pair[], a2 int[], m2 int[][], big text)",
    "ALTER TABLE every_type ALTER COLUMN big SET STORAGE EXTERNAL",
    "CREATE PUBLICATION every_type FOR TABLE every_type"
  };

  private static final String ROW_1 =
      "INSERT INTO every_type VALUES (1, -32768, 2147483647, -9223372036854775808, 4294967295,"
          + " 1.5, -2.25e-300, 12.340, -999.99, true, 'tëxt \"q\" \\ ', 'varchar', 'ab',"
          + " 'name', 'z', '\\x00ff10', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
          + " '{\"a\": [1, 2.5]}', '{\"b\": null}', '<a>x</a>', 'très bien', '2026-11-30',"
          + " '10:18:40.123456', '10:18:40.123', '10:18:40.5+02', '2026-11-30 10:18:40.123456',"
          + " '0044-03-15 10:18:40.999 BC', '2026-11-30 10:18:40.5+02',"
          + " '1970-01-01 00:00:00.001+00', '1 year 2 mons 3 days 04:05:06.5', 1234.56,"
          + " '10.0.0.1/8', '(1.5,-2)', '[1,10)', ROW(1, 'x, \"y\"'), 5, 123456.78,"
          + " '{1,NULL,-3}', '{a,\"b,c\",NULL}', '{1.5,NULL}', '{sad,ok}', '{1,2}',"
          + " '{2026-11-30,1969-12-31}', '{\"[1,2)\",empty}', ARRAY[ROW(2, 'z')::pair, NULL],"
          + " '{1,2}', '{{1,2},{3,NULL}}',"
          + " (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g))";

  private static final String ROW_2 =
      "INSERT INTO every_type (id, f4, f8, n, n52, d, tm, ttz, ts, tstz, iv, a2, m2) VALUES (2, 'NaN',"
          + " '-Infinity', 'Infinity', 'NaN', 'infinity', '24:00:00', '24:00:00+02', '-infinity',"
          + " 'infinity', '-1 mons -02:03:04.5', '{{1,2},{3,4}}', '{1,2}')";

  private static final String ROW_3 = "INSERT INTO every_type (id) VALUES (3)";

  private static TimeZoneReset zone;

  private final EmbeddedPostgresServer pg;

  ChangeRecordsPostgresTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /** Keeps the JVM's zone, which pgjdbc passes to the session, away from UTC. */
  private record TimeZoneReset(java.util.TimeZone saved) {}

  /** Sets a JVM time zone with summer time, so that timestamptz texts carry offsets. */
  @BeforeAll
  static void zone() {
    zone = new TimeZoneReset(java.util.TimeZone.getDefault());
    java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("Europe/Amsterdam"));
  }

  /** Restores the JVM's time zone. */
  @AfterAll
  static void restoreZone() {
    java.util.TimeZone.setDefault(zone.saved());
  }

  /** Queues the events of one source. */
  private static final class Queue {
    final LinkedBlockingQueue<ChangeEvent> events = new LinkedBlockingQueue<>();

    /** Waits for exactly the next {@code n} events, failing after {@link #WAIT}. */
    List<ChangeEvent> take(int n) throws InterruptedException {
      List<ChangeEvent> taken = new ArrayList<>();
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (taken.size() < n) {
        ChangeEvent e = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (e == null) {
          throw new AssertionError("got " + taken.size() + " of " + n + " events: " + taken);
        }
        taken.add(e);
      }
      return taken;
    }
  }

  /** A source on the {@code every_type} publication, creating its slot. */
  private PgCdcSource source(String slot, boolean binary) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication("every_type")
        .checkpointStore(new MemoryCheckpointStore())
        .createSlot(true)
        .binary(binary)
        .build();
  }

  /**
   * Every type, special values, NULLs, unchanged TOAST, a new enum column and a delete, in one
   * format.
   */
  @ParameterizedTest(name = "binary={0}")
  @ValueSource(booleans = {false, true})
  void everyTypeMatchesPostgreSqlInTextAndBinaryMode(boolean binary) throws Exception {
    if (!binary) {
      pg.execute(SCHEMA);
    }
    String suffix = binary ? "binary" : "text";
    Queue queue = new Queue();
    try (PgCdcSource source = source("every_" + suffix, binary)) {
      source.start(
          (event, checkpoints) -> {
            queue.events.add(event);
            checkpoints.acknowledge(event.offset());
          });
      ChangeRecords records =
          new ChangeRecords(
              RecordSettings.defaults("srv", "postgres", "0.1.0"),
              Clock.fixed(NOW, ZoneOffset.UTC));
      int base = binary ? 10 : 0;
      pg.execute(shift(ROW_1, base), shift(ROW_2, base), shift(ROW_3, base));
      List<ChangeEvent> inserts = queue.take(3);
      Map<String, Object> expected1 = oracle(base + 1);
      Map<String, Object> expected2 = oracle(base + 2);
      Map<String, Object> expected3 = oracle(base + 3);

      Collected.Part first = convertOne(records, inserts.get(0));
      Struct after1 = after(first);
      assertRow(expected1, after1);
      assertNull(after1.schema().version(), "no version, as Debezium's");
      assertEquals(Map.of(), headers(first));
      assertEquals(base + 1, ((Struct) first.key()).get("id"));
      assertEquals("srv.public.every_type", first.topic());

      Collected.Part second = convertOne(records, inserts.get(1));
      Struct after2 = after(second);
      Map<String, String> headers2 = headers(second);
      // numeric NaN/Infinity have no Connect Decimal: null and a header (docs)
      assertEquals("Infinity", expected2.remove("n"));
      assertEquals("NaN", expected2.remove("n52"));
      assertNull(after2.get("n"));
      assertNull(after2.get("n52"));
      assertEquals(
          Map.of(
              "datum.unrepresentable.after.n", "Infinity",
              "datum.unrepresentable.after.n52", "NaN",
              "datum.unrepresentable.after.a2", "[[1, 2], [3, 4]]",
              "datum.unrepresentable.after.m2", "[1, 2]"),
          headers2);
      assertNull(after2.get("a2"));
      assertEquals("[1, 2]", expected2.remove("m2").toString());
      assertNull(after2.get("m2"));
      assertRow(expected2, after2);
      assertEquals(86_400_000_000L, after2.get("tm"));
      assertEquals("22:00:00Z", after2.get("ttz"));
      assertEquals("infinity", after2.get("tstz"));
      assertTrue(Float.isNaN(after2.getFloat32("f4")));

      Struct after3 = after(convertOne(records, inserts.get(2)));
      assertRow(expected3, after3);
      for (String column : ORACLE.keySet()) {
        if (!column.equals("id")) {
          assertNull(after3.get(column), column);
        }
      }

      // an update leaving the TOASTed column unchanged; a column added; a delete
      pg.execute(
          "UPDATE every_type SET i4 = 42 WHERE id = " + (base + 1),
          // a type created while the source runs, and a column of it
          "CREATE TYPE color_" + suffix + " AS ENUM ('red', 'green')",
          "ALTER TABLE every_type ADD COLUMN extra" + suffix + " color_" + suffix,
          "INSERT INTO every_type (id, extra" + suffix + ") VALUES (" + (base + 4) + ", 'green')",
          "DELETE FROM every_type WHERE id = " + (base + 3));
      List<ChangeEvent> changes = queue.take(3);
      Collected.Part update = convertOne(records, changes.get(0));
      Struct updated = after(update);
      assertEquals("u", ((Struct) update.value()).get("op"));
      assertEquals(42, updated.get("i4"));
      assertEquals("__debezium_unavailable_value", updated.get("big"));
      assertEquals(Map.of("datum.unchanged_toast.after.big", "placeholder"), headers(update));
      Map<String, Object> expectedUpdate = oracle(base + 1);
      expectedUpdate.remove("big");
      assertRow(expectedUpdate, updated);

      Collected.Part added = convertOne(records, changes.get(1));
      Struct addedRow = after(added);
      assertNotSame(after1.schema(), addedRow.schema(), "a column added: a new value schema");
      assertEquals("green", addedRow.get("extra" + suffix));
      Schema color = addedRow.schema().field("extra" + suffix).schema();
      assertEquals("io.debezium.data.Enum", color.name());
      assertEquals("red,green", color.parameters().get("allowed"));
      assertSame(first.keySchema(), added.keySchema(), "the key did not change");

      Collected sink = new Collected();
      assertEquals(2, records.convert(changes.get(2), sink));
      Struct deleted = (Struct) sink.parts.get(0).value();
      assertEquals("d", deleted.get("op"));
      assertEquals(base + 3, deleted.getStruct("before").get("id"));
      assertNull(deleted.getStruct("before").get("t"));
      assertNull(sink.parts.get(1).value());
      assertEquals(sink.parts.get(0).key(), sink.parts.get(1).key());
      jsonRoundTrip(sink.parts.get(0));
    }
  }

  /**
   * Rows read by the initial snapshot convert exactly as the same rows streamed later: same value
   * schema (the snapshot's column list equals the Relation message's), same values; their source
   * block names the snapshot.
   */
  @Test
  void snapshotRowsConvertLikeStreamedRows() throws Exception {
    pg.execute(
        "CREATE TYPE snap_mood AS ENUM ('a', 'b')",
        "CREATE TABLE snap (id int PRIMARY KEY, n numeric(7,3), ts timestamptz(3), m snap_mood,"
            + " ns numeric[], d date, grid int[][], j jsonb)",
        "CREATE PUBLICATION snap FOR TABLE snap",
        "INSERT INTO snap VALUES (1, 1.5, '2026-11-30 10:18:40.5+02', 'b', '{1.10,NaN}',"
            + " '-infinity', '{{1},{2}}', '[1]')");
    Queue queue = new Queue();
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("snap")
            .publication("snap")
            .checkpointStore(new MemoryCheckpointStore())
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL)
            .build()) {
      source.start(
          (event, checkpoints) -> {
            queue.events.add(event);
            checkpoints.acknowledge(event.offset());
          });
      ChangeEvent read = queue.take(1).get(0);
      assertInstanceOf(ReadEvent.class, read);
      pg.execute(
          "INSERT INTO snap VALUES (2, 1.5, '2026-11-30 10:18:40.5+02', 'b', '{1.10,NaN}',"
              + " '-infinity', '{{1},{2}}', '[1]')");
      ChangeEvent insert = queue.take(1).get(0);
      ChangeRecords records =
          new ChangeRecords(RecordSettings.defaults("srv", "postgres", "0.1.0"));
      Collected.Part fromSnapshot = convertOne(records, read);
      Collected.Part fromStream = convertOne(records, insert);
      Struct a = after(fromSnapshot);
      Struct b = after(fromStream);
      assertSame(a.schema(), b.schema());
      a.put("id", 2);
      assertEquals(b, a);
      assertEquals(new BigDecimal("1.500"), b.get("n"));
      assertEquals("2026-11-30T08:18:40.500Z", b.get("ts"));
      assertEquals(List.of(List.of(1), List.of(2)), b.get("grid"));
      assertEquals(headers(fromSnapshot), headers(fromStream));
      assertEquals(Map.of("datum.unrepresentable.after.ns", "[1.10, NaN]"), headers(fromStream));
      Struct block = ((Struct) fromSnapshot.value()).getStruct("source");
      assertEquals("last_in_data_collection", block.get("snapshot"));
      assertEquals("initial", block.get("snapshot_id"));
      assertEquals("r", ((Struct) fromSnapshot.value()).get("op"));
    }
  }

  /**
   * pgoutput flags every column of a REPLICA IDENTITY FULL table as identity; the key is the
   * primary key nevertheless (as Debezium's), and no key for a table without one.
   */
  @Test
  void replicaIdentityFullTablesAreKeyedByThePrimaryKey() throws Exception {
    pg.execute(
        "CREATE TABLE full_pk (note text, id int, region text, PRIMARY KEY (region, id))",
        "ALTER TABLE full_pk REPLICA IDENTITY FULL",
        "CREATE TABLE full_nopk (note text)",
        "ALTER TABLE full_nopk REPLICA IDENTITY FULL",
        "CREATE PUBLICATION full_tables FOR TABLE full_pk, full_nopk");
    Queue queue = new Queue();
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("full_tables")
            .publication("full_tables")
            .checkpointStore(new MemoryCheckpointStore())
            .createSlot(true)
            .build()) {
      source.start(
          (event, checkpoints) -> {
            queue.events.add(event);
            checkpoints.acknowledge(event.offset());
          });
      pg.execute(
          "INSERT INTO full_pk VALUES ('a', 1, 'eu')",
          "UPDATE full_pk SET note = 'b'",
          "INSERT INTO full_nopk VALUES ('z')",
          "DELETE FROM full_nopk");
      List<ChangeEvent> events = queue.take(4);
      ChangeRecords records =
          new ChangeRecords(RecordSettings.defaults("srv", "postgres", "0.1.0"));
      Collected.Part insert = convertOne(records, events.get(0));
      assertEquals(
          List.of("region", "id"),
          insert.keySchema().fields().stream().map(f -> f.name()).toList());
      assertEquals("eu", ((Struct) insert.key()).get("region"));
      assertEquals(1, ((Struct) insert.key()).get("id"));
      Collected.Part update = convertOne(records, events.get(1));
      assertEquals(insert.key(), update.key());
      assertEquals("a", ((Struct) update.value()).getStruct("before").get("note"));
      assertEquals("b", after(update).get("note"));
      Collected.Part keyless = convertOne(records, events.get(2));
      assertNull(keyless.keySchema());
      assertNull(keyless.key());
      Collected delete = new Collected();
      assertEquals(2, records.convert(events.get(3), delete));
      assertEquals("z", ((Struct) delete.parts.get(0).value()).getStruct("before").get("note"));
    }
  }

  /** Adds {@code base} to an INSERT's first value, the id. */
  private static String shift(String insert, int base) {
    if (base == 0) {
      return insert;
    }
    return insert.replaceFirst("VALUES \\((\\d+)", "VALUES (" + base + "+$1");
  }

  /** Converts an event of one record, validating it and its JSON round trip. */
  private static Collected.Part convertOne(ChangeRecords records, ChangeEvent event) {
    Collected sink = new Collected();
    assertEquals(1, records.convert(event, sink));
    Collected.Part part = sink.only();
    ConnectSchema.validateValue(part.valueSchema(), part.value());
    jsonRoundTrip(part);
    return part;
  }

  /** Returns a record's {@code after} Struct. */
  private static Struct after(Collected.Part part) {
    return ((Struct) part.value()).getStruct("after");
  }

  /** Returns a record's headers as a map of their values' texts. */
  private static Map<String, String> headers(Collected.Part part) {
    Map<String, String> map = new LinkedHashMap<>();
    if (part.headers() != null) {
      for (Header h : part.headers()) {
        if (!h.key().startsWith(ChangeRecords.CONTEXT_HEADER)) {
          map.put(h.key(), String.valueOf(h.value()));
        }
      }
    }
    return map;
  }

  /** The value through JsonConverter (with schemas) and back must be equal, schema included. */
  private static void jsonRoundTrip(Collected.Part part) {
    JsonConverter json = new JsonConverter();
    json.configure(Map.of("schemas.enable", "true", "replace.null.with.default", "false"), false);
    byte[] bytes = json.fromConnectData(part.topic(), part.valueSchema(), part.value());
    SchemaAndValue back = json.toConnectData(part.topic(), bytes);
    Object sent = normalize(part.value());
    Object received = normalize(back.value());
    if (sent instanceof Map<?, ?> envelope && envelope.get("after") instanceof Map<?, ?> after) {
      // Connect's JsonConverter writes float NaN and ±Infinity as the strings "NaN",
      // "Infinity", "-Infinity" and reads them back as 0.0 (docs/kafka-connect-types.md)
      Map<?, ?> back2 = (Map<?, ?>) ((Map<?, ?>) received).get("after");
      for (String column : List.of("f4", "f8")) {
        Object v = after.get(column);
        if (v != null
            && !Double.isFinite(((Number) (v instanceof String ? Double.NaN : v)).doubleValue())) {
          assertEquals(0.0, ((Number) back2.get(column)).doubleValue(), column);
          @SuppressWarnings("unchecked")
          Map<String, Object> a = (Map<String, Object>) after;
          @SuppressWarnings("unchecked")
          Map<String, Object> b = (Map<String, Object>) back2;
          a.put(column, null);
          b.put(column, null);
        }
      }
    }
    assertEquals(sent, received, part.topic());
    if (part.key() != null) {
      JsonConverter keys = new JsonConverter();
      keys.configure(Map.of("schemas.enable", "true"), true);
      byte[] k = keys.fromConnectData(part.topic(), part.keySchema(), part.key());
      assertEquals(normalize(part.key()), normalize(keys.toConnectData(part.topic(), k).value()));
    }
  }

  /** A Struct as nested maps and lists, bytes as lists, for comparisons across schemas. */
  private static Object normalize(Object value) {
    if (value instanceof Struct s) {
      Map<String, Object> map = new LinkedHashMap<>();
      for (org.apache.kafka.connect.data.Field f : s.schema().fields()) {
        map.put(f.name(), normalize(s.get(f)));
      }
      return map;
    }
    if (value instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      for (Object o : list) {
        out.add(normalize(o));
      }
      return out;
    }
    if (value instanceof byte[] b) {
      return "bytes:" + java.util.HexFormat.of().formatHex(b);
    }
    if (value instanceof java.nio.ByteBuffer b) {
      byte[] copy = new byte[b.remaining()];
      b.duplicate().get(copy);
      return "bytes:" + java.util.HexFormat.of().formatHex(copy);
    }
    if (value instanceof Float f && f.isNaN()) {
      return "NaN";
    }
    return value;
  }

  /** Queries the expected Connect value of every column of a row. */
  private Map<String, Object> oracle(int id) throws SQLException {
    StringBuilder sql = new StringBuilder("SELECT ");
    for (Map.Entry<String, String> e : ORACLE.entrySet()) {
      sql.append(sql.length() > 7 ? ", " : "")
          .append(e.getValue())
          .append(" AS ")
          .append(e.getKey());
    }
    sql.append(" FROM every_type WHERE id = ").append(id);
    Map<String, Object> expected = new LinkedHashMap<>();
    try (Connection c = pg.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql.toString())) {
      assertTrue(rs.next(), "row " + id);
      ResultSetMetaData md = rs.getMetaData();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        expected.put(md.getColumnLabel(i), jdbc(rs.getObject(i)));
      }
    }
    return expected;
  }

  /** A JDBC value with arrays as Lists. */
  private static Object jdbc(Object value) throws SQLException {
    if (value instanceof Array a) {
      return lists(a.getArray());
    }
    return value;
  }

  /** A Java array, nested or not, as Lists. */
  private static Object lists(Object value) {
    if (value instanceof Object[] array) {
      List<Object> list = new ArrayList<>(array.length);
      for (Object element : array) {
        list.add(lists(element));
      }
      return list;
    }
    return value;
  }

  /** Compares each expected column with the Struct's field, by the field's representation. */
  private static void assertRow(Map<String, Object> expected, Struct row) {
    for (Map.Entry<String, Object> e : expected.entrySet()) {
      String column = e.getKey();
      Object want = e.getValue();
      Object got = row.get(column);
      Schema schema = row.schema().field(column).schema();
      if (want == null) {
        assertNull(got, column);
        continue;
      }
      assertNotNull(got, column);
      switch (column) {
        case "i2" -> assertEquals(((Integer) want).shortValue(), got, column);
        case "n" -> {
          assertEquals("io.debezium.data.VariableScaleDecimal", schema.name());
          Struct v = (Struct) got;
          BigDecimal decimal =
              new BigDecimal(new BigInteger(v.getBytes("value")), v.getInt32("scale"));
          assertEquals(new BigDecimal((String) want), decimal, column);
        }
        case "n52", "pr" -> {
          assertEquals("org.apache.kafka.connect.data.Decimal", schema.name());
          assertEquals(new BigDecimal((String) want), got, column);
        }
        case "an" -> {
          List<?> texts = (List<?>) want;
          List<BigDecimal> decimals = new ArrayList<>();
          for (Object t : texts) {
            decimals.add(t == null ? null : new BigDecimal((String) t));
          }
          assertEquals(decimals, got, column);
        }
        case "iv" -> assertEquals((long) (double) (Double) want, got, column);
        case "by" -> assertArrayEquals((byte[]) want, (byte[]) got, column);
        default -> assertEquals(want, got, column);
      }
      ConnectSchema.validateValue(schema, got);
    }
    assertSemanticNames(row.schema());
  }

  /** Checks the Debezium semantic names of the value schema. */
  private static void assertSemanticNames(Schema value) {
    Map<String, String> names = new HashMap<>();
    names.put("u", "io.debezium.data.Uuid");
    names.put("j", "io.debezium.data.Json");
    names.put("jb", "io.debezium.data.Json");
    names.put("x", "io.debezium.data.Xml");
    names.put("m", "io.debezium.data.Enum");
    names.put("d", "io.debezium.time.Date");
    names.put("tm", "io.debezium.time.MicroTime");
    names.put("tm3", "io.debezium.time.Time");
    names.put("ttz", "io.debezium.time.ZonedTime");
    names.put("ts", "io.debezium.time.MicroTimestamp");
    names.put("ts3", "io.debezium.time.Timestamp");
    names.put("tstz", "io.debezium.time.ZonedTimestamp");
    names.put("iv", "io.debezium.time.MicroDuration");
    for (Map.Entry<String, String> e : names.entrySet()) {
      assertEquals(e.getValue(), value.field(e.getKey()).schema().name(), e.getKey());
    }
    assertEquals("sad,ok,très bien", value.field("m").schema().parameters().get("allowed"));
    assertEquals("io.debezium.data.Enum", value.field("am").schema().valueSchema().name());
    assertEquals(Schema.Type.INT32, value.field("api").schema().valueSchema().type());
    assertEquals(Schema.Type.STRING, value.field("acp").schema().valueSchema().type());
    assertEquals(Schema.Type.INT32, value.field("a2").schema().valueSchema().type());
    assertEquals(
        Schema.Type.INT32,
        value.field("m2").schema().valueSchema().valueSchema().type(),
        "int[][] nests as deep as declared");
  }
}
