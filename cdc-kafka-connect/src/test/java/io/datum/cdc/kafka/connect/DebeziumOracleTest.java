package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.kafka.connect.DebeziumDifference.Seen;
import io.datum.cdc.kafka.connect.RecordDiff.Difference;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.PGConnection;

/**
 * Debezium 3.6.1's PostgreSQL connector as the oracle: it and ours run on one in-JVM Connect
 * cluster over the same publication of one PostgreSQL 17, each with its own slot, both writing
 * through JsonConverter with schemas; every record of an initial snapshot and of a workload of many
 * types, edge values, TOAST, key changes, replica identities, deletes, a COPY, messages and
 * TRUNCATE is compared, schema and value, key, value and headers.
 */
@EmbeddedPostgresTest
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DebeziumOracleTest {

  private static final long TIMEOUT_MS = Duration.ofSeconds(90).toMillis();
  private static final String DEBEZIUM = "dbz";
  private static final String OURS = "dtm";
  private static final String TABLES =
      "public.every_type,public.full_ri,public.composite,public.full_nokey,public.marker";

  private static final String[] SCHEMA = {
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'très bien')",
    "CREATE DOMAIN posint AS int CHECK (VALUE > 0)",
    "CREATE DOMAIN price AS numeric(8,2)",
    "CREATE TYPE pair AS (a int, b text)",
    "CREATE TABLE every_type (id int PRIMARY KEY, i2 int2, i4 int4 NOT NULL DEFAULT 0, i8 int8,"
        + " o oid, f4 float4, f8 float8, n numeric, n52 numeric(5,2), b bool, t text,"
        + " vc varchar(10), c char(3), nm name, ch \"char\", by bytea, u uuid, j json, jb jsonb,"
        + " x xml, m mood, d date, tm time, tm3 time(3), ttz timetz, ts timestamp,"
        + " ts3 timestamp(3), tstz timestamptz, tstz3 timestamptz(3), iv interval, mn money,"
        + " ip inet, pt point, r int4range, cp pair, pi posint, pr price, ai int[], at text[],"
        + " an numeric(6,1)[], am mood[], api posint[], ad date[], ar int4range[], acp pair[],"
        + " b1 bit(1), bt bit(3), vb varbit, mac macaddr, mac8 macaddr8, cidr cidr, tsv tsvector,"
        + " nr numrange, dr daterange, tr tstzrange, i8r int8range, i2a int2[], i8a int8[],"
        + " f4a float4[], f8a float8[], boa bool[], ba bytea[], ua uuid[], tsa timestamp[],"
        + " tsta timestamptz[], vca varchar[], ja jsonb[], ina inet[], ia interval[], ma money[],"
        + " ta time[], nu numeric[], ts0 timestamp(0), tm6 time(6), tstz0 timestamptz(0),"
        + " n0 numeric(10,0), hugen numeric(38,10), cr char(1), big text)",
    "ALTER TABLE every_type ALTER COLUMN big SET STORAGE EXTERNAL",
    "CREATE TABLE full_ri (id int PRIMARY KEY, a text, b int)",
    "ALTER TABLE full_ri REPLICA IDENTITY FULL",
    "CREATE TABLE composite (k1 int, k2 text, v text, PRIMARY KEY (k1, k2))",
    "CREATE TABLE full_nokey (a int, b text)",
    "ALTER TABLE full_nokey REPLICA IDENTITY FULL",
    "CREATE TABLE marker (id int PRIMARY KEY)",
    "CREATE PUBLICATION oracle FOR TABLE every_type, full_ri, composite, full_nokey, marker"
  };

  private static String everyType(int id) {
    return "INSERT INTO every_type VALUES ("
        + id
        + ", -32768, 2147483647, -9223372036854775808, 4294967295,"
        + " 1.5, -2.25e-300, 12.340, -999.99, true, 'tëxt \"q\" \\ ', 'varchar', 'ab',"
        + " 'name', 'z', '\\x00ff10', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
        + " '{\"a\": [1, 2.5]}', '{\"b\": null}', '<a>x</a>', 'très bien', '2026-11-30',"
        + " '10:18:40.123456', '10:18:40.123', '10:18:40.5+02', '2026-11-30 10:18:40.123456',"
        + " '0044-03-15 10:18:40.999 BC', '2026-11-30 10:18:40.5+02',"
        + " '1970-01-01 00:00:00.001+00', '1 year 2 mons 3 days 04:05:06.5', 1234.56,"
        + " '10.0.0.1/8', '(1.5,-2)', '[1,10)', ROW(1, 'x, \"y\"'), 5, 123456.78,"
        + " '{1,NULL,-3}', '{a,\"b,c\",NULL}', '{1.5,NULL}', '{sad,ok}', '{1,2}',"
        + " '{2026-11-30,1969-12-31}', '{\"[1,2)\",empty}', ARRAY[ROW(2, 'z')::pair, NULL],"
        + " '1', '101', '10101', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05',"
        + " '192.168.100.128/25', 'a fat cat', '[1.5,2.5)', '[2026-01-01,2026-02-01)',"
        + " '[2026-01-01 00:00+00,2026-01-02 00:00+00)', '[1,100)', '{1,-2}',"
        + " '{9223372036854775807}', '{1.5,NaN}', '{-0.5,Infinity}', '{t,f,NULL}',"
        + " ARRAY['\\x0102'::bytea, NULL], ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid],"
        + " ARRAY['2026-11-30 10:18:40.5'::timestamp],"
        + " ARRAY['2026-11-30 10:18:40.5+02'::timestamptz], '{x,y}', ARRAY['{\"a\": 1}'::jsonb],"
        + " '{10.0.0.1}', '{\"1 day\"}', '{1.5}', '{10:00:00}', '{1.50,NULL}',"
        + " '2026-11-30 10:18:40', '10:18:40.123456', '2026-11-30 10:18:40+02', 12345,"
        + " 12345678901234567890.1234567890, 'x',"
        + " (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g))";
  }

  private static String specialValues(int id) {
    return "INSERT INTO every_type (id, f4, f8, n52, d, tm, ts, tstz, iv) VALUES ("
        + id
        + ", 'NaN', '-Infinity', 'NaN', 'infinity', '24:00:00', '-infinity', 'infinity',"
        + " '-1 mons -02:03:04.5')";
  }

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void start(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(SCHEMA);
    // the initial snapshot's rows
    pg.execute(
        everyType(1),
        specialValues(2),
        "INSERT INTO every_type (id) VALUES (3)",
        "INSERT INTO full_ri VALUES (1, 'one', 1), (2, NULL, NULL)",
        "INSERT INTO composite VALUES (1, 'a', 'x'), (1, 'b', NULL)",
        "INSERT INTO full_nokey VALUES (1, 'x'), (1, 'x')");
    connect = ConnectClusters.shared();
    connect.configureConnector(DEBEZIUM, debezium(pg));
    connect.configureConnector(OURS, ours(pg));
    connect
        .assertions()
        .assertConnectorAndExactlyNumTasksAreRunning(DEBEZIUM, 1, "Debezium not running");
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning(OURS, 1, "ours not running");
  }

  @AfterAll
  static void stop() {
    ConnectClusters.release(connect);
  }

  private static Map<String, String> withSchemas(Map<String, String> c) {
    c.put("key.converter", JsonConverter.class.getName());
    c.put("value.converter", JsonConverter.class.getName());
    c.put("key.converter.schemas.enable", "true");
    c.put("value.converter.schemas.enable", "true");
    return c;
  }

  private static Map<String, String> debezium(EmbeddedPostgresServer pg) {
    Map<String, String> c = ConnectClusters.connector(pg, DEBEZIUM, "dbz_slot");
    c.put("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    c.put("plugin.name", "pgoutput");
    c.put("publication.name", "oracle");
    c.put("publication.autocreate.mode", "disabled");
    c.put("table.include.list", TABLES);
    c.put("snapshot.mode", "initial");
    // Debezium skips TRUNCATE by default; ours emits it: compare its records too
    c.put("skipped.operations", "none");
    // Debezium fills the transaction block only so (ours always): compare the blocks too; its
    // transaction topic (BEGIN/END records), which we do not write, is left out of the comparison
    c.put("provide.transaction.metadata", "true");
    return withSchemas(c);
  }

  private static Map<String, String> ours(EmbeddedPostgresServer pg) {
    Map<String, String> c = ConnectClusters.connector(pg, OURS, "dtm_slot");
    c.put("publication.name", "oracle");
    c.put("snapshot.mode", "initial");
    c.put("messages.enabled", "true");
    return withSchemas(c);
  }

  /** One record: topic without the prefix, key and value as parsed JSON, headers. */
  private record Rec(String topic, JsonNode key, JsonNode value, Map<String, String> headers) {

    boolean tombstone() {
      return value == null || value.isNull();
    }

    JsonNode payload() {
      return value.path("payload");
    }
  }

  @Test
  void everyRecordIsDebeziumsOrADocumentedDifference(EmbeddedPostgresServer pg) throws Exception {
    // snapshot: 3 + 2 + 2 + 2 rows
    Map<String, List<Rec>> dbzSnapshot = awaitRecords(DEBEZIUM, 9);
    Map<String, List<Rec>> ourSnapshot = awaitRecords(OURS, 9);
    List<Seen> report = new ArrayList<>();
    compareSnapshots(dbzSnapshot, ourSnapshot, report);

    pg.execute(
        everyType(11),
        specialValues(12),
        "INSERT INTO every_type (id, am) VALUES (13, '{ok,NULL}')",
        "INSERT INTO every_type (id) VALUES (14)",
        "UPDATE every_type SET i4 = 7 WHERE id = 11",
        "UPDATE every_type SET id = 21 WHERE id = 12",
        "DELETE FROM every_type WHERE id = 14",
        "DELETE FROM every_type WHERE id = 11",
        "BEGIN; UPDATE full_ri SET a = 'uno' WHERE id = 1; UPDATE full_ri SET id = 3 WHERE id = 2;"
            + " SELECT pg_logical_emit_message(true, 'pfx', 'in a transaction');"
            + " DELETE FROM full_ri WHERE id = 1; COMMIT",
        "SELECT pg_logical_emit_message(false, 'pfx', 'alone')",
        "INSERT INTO composite VALUES (2, 'c', 'y')",
        "UPDATE composite SET v = 'z' WHERE k1 = 2",
        "UPDATE composite SET k2 = 'd' WHERE k1 = 2",
        "DELETE FROM composite WHERE k1 = 1 AND k2 = 'a'",
        "INSERT INTO full_nokey VALUES (2, 'y')",
        "UPDATE full_nokey SET b = 'z' WHERE a = 2",
        "DELETE FROM full_nokey WHERE a = 2");
    try (Connection c = pg.getConnection()) {
      c.unwrap(PGConnection.class)
          .getCopyAPI()
          .copyIn("COPY full_ri FROM STDIN", new StringReader("10\tp\t1\n11\tq\t2\n12\t\\N\t3\n"));
    }
    pg.execute("TRUNCATE composite, full_nokey", "INSERT INTO marker VALUES (1)");
    Map<String, List<Rec>> dbz = awaitMarker(DEBEZIUM);
    Map<String, List<Rec>> ours = awaitMarker(OURS);
    compareStreams(dropSnapshot(dbz, dbzSnapshot), dropSnapshot(ours, ourSnapshot), report);

    assertOnlyDocumentedDifferences(report);
  }

  /**
   * Fails on a difference no {@link DebeziumDifference} matches, on a listed difference this run
   * did not produce, and when the list and the documentation's table are not the same ids.
   */
  private static void assertOnlyDocumentedDifferences(List<Seen> seen) throws Exception {
    Map<String, Integer> unexplained = new TreeMap<>();
    EnumSet<DebeziumDifference> produced = EnumSet.noneOf(DebeziumDifference.class);
    for (Seen s : seen) {
      boolean explained = false;
      for (DebeziumDifference d : DebeziumDifference.values()) {
        if (d.matcher.test(s)) {
          produced.add(d);
          explained = true;
        }
      }
      if (!explained) {
        String line =
            (s.snapshot() ? "snapshot " : "stream ")
                + s.topic()
                + " "
                + s.op()
                + " "
                + s.path()
                + ": Debezium "
                + s.debezium()
                + ", ours "
                + s.ours();
        unexplained.merge(line, 1, Integer::sum);
      }
    }
    StringBuilder text = new StringBuilder();
    unexplained.forEach((line, n) -> text.append(n).append("x ").append(line).append('\n'));
    assertTrue(unexplained.isEmpty(), "differences the docs do not list:\n" + text);
    List<String> notProduced = new ArrayList<>();
    for (DebeziumDifference d : DebeziumDifference.values()) {
      if (d.notExercised == null && !produced.contains(d)) {
        notProduced.add(d.id);
      }
    }
    assertEquals(List.of(), notProduced, "listed differences this workload no longer produces");
    List<String> ids = new ArrayList<>();
    for (DebeziumDifference d : DebeziumDifference.values()) {
      ids.add(d.id);
    }
    assertEquals(
        documentedIds(), ids, "docs/kafka-connect-types.md's table and DebeziumDifference");
  }

  /** The ids of docs/kafka-connect-types.md's table of differences, in order. */
  static List<String> documentedIds() throws Exception {
    Path docs = Path.of("..", "docs", "kafka-connect-types.md");
    List<String> ids = new ArrayList<>();
    boolean inSection = false;
    for (String line : Files.readAllLines(docs)) {
      if (line.startsWith("## ")) {
        inSection = line.startsWith("## Where we differ from Debezium");
        continue;
      }
      Matcher m = DOC_ROW.matcher(line);
      if (inSection && m.find()) {
        ids.add(m.group(1));
      }
    }
    return ids;
  }

  private static final Pattern DOC_ROW = Pattern.compile("^\\| `([a-z-]+)` \\|");

  // ---- reading ----------------------------------------------------------------------------------

  private static List<String> topics(String prefix) throws Exception {
    try (Admin admin = connect.kafka().createAdminClient()) {
      return admin.listTopics().names().get().stream()
          .filter(t -> t.startsWith(prefix + ".") && !t.equals(prefix + ".transaction"))
          .sorted()
          .toList();
    }
  }

  private static Map<String, List<Rec>> read(String prefix) throws Exception {
    Map<String, List<Rec>> byTopic = new TreeMap<>();
    List<String> topics = topics(prefix);
    if (topics.isEmpty()) {
      return byTopic;
    }
    for (ConsumerRecord<byte[], byte[]> r :
        connect.kafka().consumeAll(TIMEOUT_MS, topics.toArray(new String[0]))) {
      Map<String, String> headers = new LinkedHashMap<>();
      for (Header h : r.headers()) {
        headers.put(
            h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
      }
      String topic = r.topic().substring(prefix.length() + 1);
      JsonNode key = r.key() == null ? null : normalize(ConnectClusters.parse(r.key()), prefix);
      JsonNode value =
          r.value() == null ? null : normalize(ConnectClusters.parse(r.value()), prefix);
      byTopic
          .computeIfAbsent(topic, t -> new ArrayList<>())
          .add(new Rec(topic, key, value, headers));
    }
    return byTopic;
  }

  /** Replaces the topic prefix in every text, so that schema names of both sides compare. */
  private static JsonNode normalize(JsonNode node, String prefix) {
    if (node.isTextual()) {
      String s = node.asText();
      if (s.equals(prefix)) {
        return TextNode.valueOf("P");
      }
      return s.startsWith(prefix + ".")
          ? TextNode.valueOf("P" + s.substring(prefix.length()))
          : node;
    }
    if (node.isObject()) {
      ObjectNode copy = ConnectClusters.JSON.createObjectNode();
      node.fields().forEachRemaining(e -> copy.set(e.getKey(), normalize(e.getValue(), prefix)));
      return copy;
    }
    if (node.isArray()) {
      var copy = ConnectClusters.JSON.createArrayNode();
      node.forEach(e -> copy.add(normalize(e, prefix)));
      return copy;
    }
    return node;
  }

  private static int count(Map<String, List<Rec>> records) {
    return records.values().stream().mapToInt(List::size).sum();
  }

  private static Map<String, List<Rec>> awaitRecords(String prefix, int atLeast) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
    Map<String, List<Rec>> records = read(prefix);
    while (count(records) < atLeast) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(prefix + ": " + count(records) + " of " + atLeast + " records");
      }
      records = read(prefix);
    }
    return records;
  }

  private static Map<String, List<Rec>> awaitMarker(String prefix) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
    Map<String, List<Rec>> records = read(prefix);
    while (!records.containsKey("public.marker")) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(prefix + ": no marker record");
      }
      records = read(prefix);
    }
    return records;
  }

  private static Map<String, List<Rec>> dropSnapshot(
      Map<String, List<Rec>> all, Map<String, List<Rec>> snapshot) {
    Map<String, List<Rec>> rest = new TreeMap<>();
    all.forEach(
        (topic, records) -> {
          int skip = snapshot.getOrDefault(topic, List.of()).size();
          rest.put(topic, records.subList(skip, records.size()));
        });
    return rest;
  }

  // ---- comparing --------------------------------------------------------------------------------

  private static String keyText(Rec r) {
    return r.key() == null ? "null" : r.key().path("payload").toString();
  }

  private static void compareSnapshots(
      Map<String, List<Rec>> dbz, Map<String, List<Rec>> ours, List<Seen> report) {
    for (String topic : union(dbz, ours)) {
      Map<String, List<Rec>> dbzByKey = byKey(dbz.getOrDefault(topic, List.of()));
      Map<String, List<Rec>> oursByKey = byKey(ours.getOrDefault(topic, List.of()));
      for (String key : unionKeys(dbzByKey, oursByKey)) {
        List<Rec> a = dbzByKey.getOrDefault(key, List.of());
        List<Rec> b = oursByKey.getOrDefault(key, List.of());
        if (a.size() != b.size()) {
          report.add(
              new Seen(
                  true,
                  topic,
                  "?",
                  "records of key " + key,
                  IntNode.valueOf(a.size()),
                  IntNode.valueOf(b.size())));
          continue;
        }
        for (int i = 0; i < a.size(); i++) {
          compare(true, topic, a.get(i), b.get(i), report);
        }
      }
    }
  }

  private static Map<String, List<Rec>> byKey(List<Rec> records) {
    Map<String, List<Rec>> m = new TreeMap<>();
    for (Rec r : records) {
      String k = r.key() == null ? r.payload().path("after").toString() : keyText(r);
      m.computeIfAbsent(k, x -> new ArrayList<>()).add(r);
    }
    return m;
  }

  private static List<String> union(Map<String, ?> a, Map<String, ?> b) {
    List<String> all = new ArrayList<>(new java.util.TreeSet<>(a.keySet()));
    for (String k : b.keySet()) {
      if (!all.contains(k)) {
        all.add(k);
      }
    }
    return all;
  }

  private static List<String> unionKeys(Map<String, ?> a, Map<String, ?> b) {
    return union(a, b);
  }

  /** Groups a topic's records by {@code source.lsn}; a tombstone joins the group before it. */
  private static LinkedHashMap<String, List<Rec>> byLsn(List<Rec> records) {
    LinkedHashMap<String, List<Rec>> groups = new LinkedHashMap<>();
    List<Rec> last = null;
    for (Rec r : records) {
      if (r.tombstone()) {
        last.add(r);
        continue;
      }
      String lsn = r.payload().path("source").path("lsn").asText();
      last = groups.computeIfAbsent(lsn, x -> new ArrayList<>());
      last.add(r);
    }
    return groups;
  }

  private static void compareStreams(
      Map<String, List<Rec>> dbz, Map<String, List<Rec>> ours, List<Seen> report) {
    for (String topic : union(dbz, ours)) {
      LinkedHashMap<String, List<Rec>> a = byLsn(dbz.getOrDefault(topic, List.of()));
      LinkedHashMap<String, List<Rec>> b = byLsn(ours.getOrDefault(topic, List.of()));
      for (String lsn : union(a, b)) {
        List<Rec> ga = a.getOrDefault(lsn, List.of());
        List<Rec> gb = b.getOrDefault(lsn, List.of());
        if (ga.size() == gb.size()) {
          for (int i = 0; i < ga.size(); i++) {
            compare(false, topic, ga.get(i), gb.get(i), report);
          }
        } else {
          report.add(
              new Seen(
                  false,
                  topic,
                  "?",
                  "records at lsn " + lsn,
                  TextNode.valueOf(ga.stream().map(DebeziumOracleTest::op).toList().toString()),
                  TextNode.valueOf(gb.stream().map(DebeziumOracleTest::op).toList().toString())));
        }
      }
    }
  }

  private static String op(Rec r) {
    return r.tombstone() ? "tombstone" : r.payload().path("op").asText();
  }

  private static void compare(boolean snapshot, String topic, Rec a, Rec b, List<Seen> report) {
    List<Difference> diffs = new ArrayList<>();
    diffs.addAll(RecordDiff.diff("key", a.key(), b.key()));
    diffs.addAll(
        RecordDiff.diff("value", normalized(a, snapshot, DEBEZIUM), normalized(b, snapshot, OURS)));
    Map<String, String> ha = normalized(a.headers(), DEBEZIUM);
    Map<String, String> hb = normalized(b.headers(), OURS);
    for (String h : union(ha, hb)) {
      String va = ha.get(h);
      String vb = hb.get(h);
      if (!Objects.equals(va, vb)) {
        diffs.add(
            new Difference(
                "header/" + h,
                va == null ? NullNode.getInstance() : TextNode.valueOf(va),
                vb == null ? NullNode.getInstance() : TextNode.valueOf(vb)));
      }
    }
    for (Difference d : diffs) {
      report.add(new Seen(snapshot, topic, op(a), d.path(), d.debezium(), d.ours()));
    }
  }

  /**
   * A value without what differs between any two runs, not between the connectors: the envelope's
   * {@code ts_*} (when the record was made), {@code source.version}; for a snapshot row also the
   * position and time of its connector's own snapshot ({@code source.lsn}, the LSN in {@code
   * sequence}, {@code source.ts_*}), each first checked to be there and consistent.
   */
  private static JsonNode normalized(Rec r, boolean snapshot, String side) {
    if (r.tombstone()) {
      return r.value();
    }
    ObjectNode value = r.value().deepCopy();
    ObjectNode payload = (ObjectNode) value.get("payload");
    assertTrue(payload.path("ts_ms").isNumber(), side + " ts_ms: " + payload);
    for (String f : List.of("ts_ms", "ts_us", "ts_ns")) {
      if (payload.has(f)) { // a message's value has ts_ms only
        payload.put(f, 0);
      }
    }
    ObjectNode source = (ObjectNode) payload.get("source");
    assertTrue(source.path("version").isTextual(), side + ": " + source);
    source.put("version", "V");
    if (snapshot) {
      long lsn = source.path("lsn").asLong();
      assertTrue(lsn > 0, side + " snapshot lsn: " + source);
      assertTrue(
          source.path("sequence").asText().endsWith(",\"" + lsn + "\"]"), side + ": " + source);
      source.put("lsn", 1);
      source.put("sequence", source.path("sequence").asText().replace(Long.toString(lsn), "1"));
      for (String f : List.of("ts_ms", "ts_us", "ts_ns")) {
        assertTrue(source.path(f).isNumber(), side + " " + f + ": " + source);
        source.put(f, 0);
      }
    }
    return value;
  }

  /** Headers without the run's id (a new UUID each run, checked for its form). */
  private static Map<String, String> normalized(Map<String, String> headers, String prefix) {
    Map<String, String> h = new TreeMap<>(headers);
    String runId = h.get("__debezium.context.runId");
    if (runId != null) {
      assertEquals(runId, UUID.fromString(runId).toString());
      h.put("__debezium.context.runId", "UUID");
    }
    h.computeIfPresent(
        "__debezium.context.connectorLogicalName", (k, v) -> v.equals(prefix) ? "P" : v);
    return h;
  }
}
