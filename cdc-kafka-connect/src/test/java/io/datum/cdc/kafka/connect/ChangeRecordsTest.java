package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.PgType;
import io.datum.cdc.event.PgType.Kind;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TruncateEvent;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.junit.jupiter.api.Test;

/** Schema caching and versions, special values, headers and errors, without a server. */
class ChangeRecordsTest {

  private static final Instant NOW = Instant.parse("2026-12-01T00:00:00.000001Z");

  private final RecordSettings settings = RecordSettings.defaults("srv", "db", "0.1.0");

  /** A converter with a fixed clock. */
  private ChangeRecords records() {
    return new ChangeRecords(settings, Clock.fixed(NOW, ZoneOffset.UTC));
  }

  /** A column list. */
  private static List<ColumnInfo> columns(ColumnInfo... columns) {
    return List.of(columns);
  }

  /** A column without typmod. */
  private static ColumnInfo col(String name, int oid, boolean key) {
    return new ColumnInfo(name, oid, -1, key);
  }

  /** A column of a described type, without typmod. */
  private static ColumnInfo col(String name, PgType type) {
    return new ColumnInfo(name, type.oid(), -1, false, type, 0, -1);
  }

  /** Converts one event into a new sink. */
  private static Collected convert(ChangeRecords records, io.datum.cdc.event.ChangeEvent e) {
    Collected sink = new Collected();
    records.convert(e, sink);
    return sink;
  }

  /** One schema per column list, by identity or equality; no versions, as Debezium's. */
  @Test
  void schemasAreCachedPerColumnListWithoutVersions() {
    ChangeRecords records = records();
    List<ColumnInfo> v1 = columns(col("id", 23, true), col("note", 25, false));
    Collected.Part first = convert(records, Events.insert(v1, 1, "a")).only();
    Collected.Part second = convert(records, Events.insert(v1, 2, "b")).only();
    assertSame(first.valueSchema(), second.valueSchema());
    assertSame(first.keySchema(), second.keySchema());
    Schema value1 = first.valueSchema().field("after").schema();
    assertEquals("srv.public.t.Value", value1.name());
    assertNull(value1.version());
    assertEquals("srv.public.t.Key", first.keySchema().name());
    assertNull(first.keySchema().version());
    assertEquals("srv.public.t.Envelope", first.valueSchema().name());
    assertEquals("srv.public.t", first.topic());

    // an equal list that is another object (a new Relation message): the same schema
    List<ColumnInfo> equal = new ArrayList<>(v1);
    assertSame(
        first.valueSchema(), convert(records, Events.insert(equal, 3, "c")).only().valueSchema());

    // a column added: a new value schema, the key unchanged
    List<ColumnInfo> v2 = columns(col("id", 23, true), col("note", 25, false), col("n", 20, false));
    Collected.Part added = convert(records, Events.insert(v2, 4, "d", 5L)).only();
    Schema value2 = added.valueSchema().field("after").schema();
    assertNotSame(value1, value2);
    assertNull(value2.version());
    assertEquals(List.of("id", "note", "n"), value2.fields().stream().map(f -> f.name()).toList());
    assertSame(first.keySchema(), added.keySchema());

    // the key column retyped: new value and key schemas
    List<ColumnInfo> v3 = columns(col("id", 20, true), col("note", 25, false), col("n", 20, false));
    Collected.Part retyped = convert(records, Events.insert(v3, 6L, "e", 7L)).only();
    assertNull(retyped.valueSchema().field("after").schema().version());
    assertNull(retyped.keySchema().version());
    assertEquals(Schema.Type.INT64, retyped.keySchema().field("id").schema().type());
    assertEquals(6L, ((Struct) retyped.key()).get("id"));
    assertNotSame(first.keySchema(), retyped.keySchema());

    // back to the first list: its schema again, no new version
    assertSame(
        first.valueSchema(), convert(records, Events.insert(v1, 8, "f")).only().valueSchema());
  }

  /** A delete's key-only old row fills the table's value schema; a tombstone follows. */
  @Test
  void aKeyOnlyOldRowMapsOntoTheTableSchemaAndTheDeleteHasATombstone() {
    ChangeRecords records = records();
    List<ColumnInfo> full = columns(col("id", 23, true), col("note", 25, false));
    List<ColumnInfo> keyOnly = columns(col("id", 23, true));
    Collected.Part insert = convert(records, Events.insert(full, 1, "a")).only();
    Collected sink = convert(records, Events.delete(keyOnly, 1));
    assertEquals(2, sink.parts.size());
    Collected.Part delete = sink.parts.get(0);
    assertSame(insert.valueSchema(), delete.valueSchema());
    Struct before = ((Struct) delete.value()).getStruct("before");
    assertEquals(1, before.get("id"));
    assertNull(before.get("note"));
    assertNull(((Struct) delete.value()).get("after"));
    assertEquals("d", ((Struct) delete.value()).get("op"));
    Collected.Part tombstone = sink.parts.get(1);
    assertEquals("srv.public.t", tombstone.topic());
    assertEquals(delete.key(), tombstone.key());
    assertSame(delete.keySchema(), tombstone.keySchema());
    assertNull(tombstone.value());
    assertNull(tombstone.valueSchema());
    Collected noOldRow = new Collected();
    records.convert(
        new io.datum.cdc.event.DeleteEvent(Events.offset(0, 1), Events.tx(1), Events.TABLE, null),
        noOldRow);
    assertNull(((Struct) noOldRow.parts.get(0).value()).get("before"));
    assertNull(noOldRow.parts.get(0).key());
  }

  /**
   * An update that changes the key is Debezium's delete of the old key (header {@code
   * __debezium.newkey}), its tombstone, and a create of the new key (header {@code
   * __debezium.oldkey}); an old key equal to the new one (sent for a TOASTed key column) stays one
   * update.
   */
  @Test
  void anUpdateOfTheKeyIsADeleteATombstoneAndACreate() {
    ChangeRecords records = records();
    List<ColumnInfo> cols = columns(col("id", 23, true), col("note", 25, false));
    Row oldKey = Row.of(List.of(cols.get(0)), new Object[] {1});
    Row newRow = Row.of(cols, new Object[] {2, "moved"});
    Collected sink = new Collected();
    assertEquals(
        3,
        records.convert(
            new io.datum.cdc.event.UpdateEvent(
                Events.offset(0, 1), Events.tx(1), Events.TABLE, oldKey, newRow),
            sink));
    Collected.Part delete = sink.parts.get(0);
    Collected.Part tombstone = sink.parts.get(1);
    Collected.Part create = sink.parts.get(2);
    assertEquals(1, ((Struct) delete.key()).get("id"));
    assertEquals("d", ((Struct) delete.value()).get("op"));
    assertEquals(1, ((Struct) delete.value()).getStruct("before").get("id"));
    assertNull(((Struct) delete.value()).get("after"));
    assertEquals(
        2, ((Struct) delete.headers().lastWithName("__debezium.newkey").value()).get("id"));
    assertEquals(delete.key(), tombstone.key());
    assertNull(tombstone.value());
    assertEquals(
        2, ((Struct) tombstone.headers().lastWithName("__debezium.newkey").value()).get("id"));
    assertEquals(2, ((Struct) create.key()).get("id"));
    assertEquals("c", ((Struct) create.value()).get("op"));
    assertNull(((Struct) create.value()).get("before"));
    assertEquals("moved", ((Struct) create.value()).getStruct("after").get("note"));
    assertEquals(
        1, ((Struct) create.headers().lastWithName("__debezium.oldkey").value()).get("id"));
    for (Collected.Part p : sink.parts) {
      assertEquals(
          "srv", p.headers().lastWithName("__debezium.context.connectorLogicalName").value());
    }

    Collected same = new Collected();
    Row sameKey = Row.of(List.of(cols.get(0)), new Object[] {2});
    assertEquals(
        1,
        records.convert(
            new io.datum.cdc.event.UpdateEvent(
                Events.offset(0, 1), Events.tx(1), Events.TABLE, sameKey, newRow),
            same));
    assertEquals("u", ((Struct) same.only().value()).get("op"));
  }

  @Test
  void theEnvelopeCarriesSourceTransactionAndTimes() {
    ChangeRecords records = records();
    List<ColumnInfo> cols = columns(col("id", 23, true));
    Collected.Part part = convert(records, Events.insert(cols, 1)).only();
    Struct value = (Struct) part.value();
    assertEquals(
        List.of("before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"),
        value.schema().fields().stream().map(f -> f.name()).toList());
    assertEquals("c", value.get("op"));
    assertEquals(NOW.toEpochMilli(), value.get("ts_ms"));
    assertEquals(NOW.getEpochSecond() * 1_000_000L + 1, value.get("ts_us"));
    assertEquals(NOW.getEpochSecond() * 1_000_000_000L + 1_000, value.get("ts_ns"));
    Struct source = value.getStruct("source");
    assertEquals("io.debezium.connector.postgresql.Source", source.schema().name());
    assertEquals("0.1.0", source.get("version"));
    assertEquals("postgresql", source.get("connector"));
    assertEquals("srv", source.get("name"));
    assertEquals(Events.COMMIT.toEpochMilli(), source.get("ts_ms"));
    assertEquals(Events.COMMIT.getEpochSecond() * 1_000_000L + 123_456, source.get("ts_us"));
    assertEquals("false", source.get("snapshot"));
    assertEquals("db", source.get("db"));
    assertEquals("public", source.get("schema"));
    assertEquals("t", source.get("table"));
    assertEquals(771L, source.get("txId"));
    // the change's own LSN; Debezium's sequence: the previous transaction's end, this LSN
    assertEquals(0x16B3700L, source.get("lsn"));
    assertEquals("[\"23801872\",\"23803648\"]", source.get("sequence"));
    assertEquals(0x16B3748L, source.get("commit_lsn"));
    assertEquals(0x16B3780L, source.get("tx_end_lsn"));
    assertEquals(0, source.get("event_index"));
    assertEquals(1, source.get("event_count"));
    Struct tx = value.getStruct("transaction");
    assertEquals("771:23803720", tx.get("id"));
    assertEquals(1L, tx.get("total_order"));
    assertEquals(1L, tx.get("data_collection_order"));
    assertEquals(Events.COMMIT.toEpochMilli(), part.timestampMillis());
    // Debezium's context headers, and nothing else
    Map<String, Object> headers = new java.util.LinkedHashMap<>();
    for (Header h : part.headers()) {
      headers.put(h.key(), h.value());
    }
    String runId = (String) headers.get("__debezium.context.runId");
    assertEquals(36, runId.length(), runId);
    assertEquals(
        Map.of(
            "__debezium.context.connectorLogicalName", "srv",
            "__debezium.context.taskId", "0",
            "__debezium.context.connectorName", "postgresql",
            "__debezium.context.runId", runId),
        headers);
  }

  /**
   * Snapshot rows: {@code snapshot}, {@code snapshot_id}, {@code snapshot_chunk}, no transaction.
   */
  @Test
  void aSnapshotRowSaysWhichSnapshotAndChunk() {
    ChangeRecords records = records();
    List<ColumnInfo> cols = columns(col("id", 23, true));
    PgLsn at = Events.COMMIT_LSN;
    var initial =
        new io.datum.cdc.event.ReadEvent(
            new io.datum.cdc.CdcOffset("slot", at, at, 0, 0, 2, 7),
            new io.datum.cdc.event.TransactionInfo(0, at, at, Events.COMMIT, null, 2),
            Events.TABLE,
            Row.of(cols, new Object[] {1}),
            new io.datum.cdc.event.SnapshotInfo("initial", 7, at, false));
    Struct value = (Struct) convert(records, initial).only().value();
    assertEquals("r", value.get("op"));
    assertNull(value.get("transaction"));
    Struct source = value.getStruct("source");
    assertEquals("true", source.get("snapshot"));
    assertEquals("initial", source.get("snapshot_id"));
    assertEquals(7L, source.get("snapshot_chunk"));
    assertEquals(at.asLong(), source.get("lsn"));
    assertNull(source.get("txId"));
    assertEquals("[null,\"" + at.asLong() + "\"]", source.get("sequence"), "Debezium's");

    var last =
        new io.datum.cdc.event.ReadEvent(
            new io.datum.cdc.CdcOffset("slot", at, at, 0, 1, 2, 7),
            new io.datum.cdc.event.TransactionInfo(0, at, at, Events.COMMIT, null, 2),
            Events.TABLE,
            Row.of(cols, new Object[] {2}),
            new io.datum.cdc.event.SnapshotInfo("initial", 7, at, true));
    Struct lastSource = ((Struct) convert(records, last).only().value()).getStruct("source");
    assertEquals("last_in_data_collection", lastSource.get("snapshot"));
    assertEquals(1, lastSource.get("event_index"));

    var online =
        new io.datum.cdc.event.ReadEvent(
            new io.datum.cdc.CdcOffset("slot", at, at, 0, 0, 1, 8),
            new io.datum.cdc.event.TransactionInfo(0, at, at, Events.COMMIT, null, 1),
            Events.TABLE,
            Row.of(cols, new Object[] {3}),
            new io.datum.cdc.event.SnapshotInfo("request-0/16B3748", 8, at, true));
    Struct onlineSource = ((Struct) convert(records, online).only().value()).getStruct("source");
    assertEquals("incremental", onlineSource.get("snapshot"));
    assertNull(onlineSource.get("lsn"), "Debezium leaves lsn out of incremental snapshot rows");
    assertEquals(at.asLong(), onlineSource.get("commit_lsn"));
  }

  /** Without the first event of a transaction, no per-table order, so no transaction block. */
  @Test
  void aTransactionResumedInTheMiddleHasNoTransactionBlock() {
    ChangeRecords records = records();
    List<ColumnInfo> cols = columns(col("id", 23, true));
    Row row = Row.of(cols, new Object[] {1});
    var e1 =
        new io.datum.cdc.event.InsertEvent(Events.offset(1, 3), Events.tx(3), Events.TABLE, row);
    var e2 =
        new io.datum.cdc.event.InsertEvent(Events.offset(2, 3), Events.tx(3), Events.TABLE, row);
    assertNull(((Struct) convert(records, e1).only().value()).get("transaction"));
    assertNull(((Struct) convert(records, e2).only().value()).get("transaction"));
  }

  /** Truncates per table; messages as Debezium's, or none when off. */
  @Test
  void truncateIsOneRecordPerTableAndMessagesFollowDebezium() {
    ChangeRecords records = records();
    TableId other = new TableId("s", "u");
    Collected sink =
        convert(
            records,
            new TruncateEvent(
                Events.offset(0, 1), Events.tx(1), List.of(Events.TABLE, other), false, false));
    assertEquals(2, sink.parts.size());
    assertEquals("srv.public.t", sink.parts.get(0).topic());
    assertEquals("srv.s.u", sink.parts.get(1).topic());
    Struct truncate = (Struct) sink.parts.get(1).value();
    assertEquals("t", truncate.get("op"));
    assertNull(truncate.get("before"));
    assertNull(truncate.get("after"));
    assertNull(sink.parts.get(1).key());
    assertEquals("u", truncate.getStruct("source").get("table"));
    // records are counted, as Debezium counts them: the second table's is the second record
    assertEquals(2L, truncate.getStruct("transaction").get("total_order"));
    assertEquals(1L, truncate.getStruct("transaction").get("data_collection_order"));

    // a snapshot's reset of a table without a key: one `t` record whose source is a snapshot
    // row's, without a transaction block
    io.datum.cdc.PgLsn at = io.datum.cdc.PgLsn.parse("0/500");
    TruncateEvent reset =
        new TruncateEvent(
            new io.datum.cdc.CdcOffset("slot", at, at, 0, 0, 1, 9),
            new io.datum.cdc.event.TransactionInfo(0, at, at, java.time.Instant.EPOCH, null, 1),
            List.of(Events.TABLE),
            false,
            false,
            new io.datum.cdc.event.SnapshotInfo("request-0/400", 9, at, false));
    Struct r = (Struct) convert(records, reset).only().value();
    assertEquals("t", r.get("op"));
    assertEquals("incremental", r.getStruct("source").get("snapshot"));
    assertEquals("request-0/400", r.getStruct("source").get("snapshot_id"));
    assertEquals(9L, r.getStruct("source").get("snapshot_chunk"));
    assertNull(r.get("transaction"));

    byte[] content = "hello".getBytes(StandardCharsets.UTF_8);
    MessageEvent message =
        new MessageEvent(Events.offset(0, 1), Events.tx(1), "pfx", content, false);
    Collected.Part m = convert(records, message).only();
    assertEquals("srv.message", m.topic());
    assertEquals("pfx", ((Struct) m.key()).get("prefix"));
    Struct value = (Struct) m.value();
    assertEquals("m", value.get("op"));
    assertEquals("pfx", value.getStruct("message").get("prefix"));
    assertArrayEquals(content, (byte[]) value.getStruct("message").get("content"));
    assertEquals("", value.getStruct("source").get("table"));
    assertNull(value.get("transaction"));

    RecordSettings off =
        new RecordSettings(
            "srv",
            "db",
            false,
            null,
            settings.decimalMode(),
            settings.intervalMode(),
            settings.timePrecisionMode(),
            settings.unavailablePlaceholder(),
            "v");
    assertEquals(0, new ChangeRecords(off).convert(message, new Collected()));
  }

  /** Placeholders where Debezium has them, null otherwise, and a header for each. */
  @Test
  void unchangedToastUndecodedAndSpecialValuesBecomeHeaders() {
    ChangeRecords records = records();
    List<ColumnInfo> cols =
        columns(
            col("id", 23, true),
            col("big", 25, false),
            col("bin", 17, false),
            col("nums", 1231, false),
            col("texts", 1009, false),
            col("n", 1700, false),
            col("raw", 23, false));
    Row after =
        Row.of(
            cols,
            new Object[] {
              1,
              Row.UNCHANGED_TOAST,
              Row.UNCHANGED_TOAST,
              Row.UNCHANGED_TOAST,
              Row.UNCHANGED_TOAST,
              Double.NaN,
              "not-an-int"
            },
            new int[] {6});
    Collected.Part part =
        convert(
                records,
                new io.datum.cdc.event.UpdateEvent(
                    Events.offset(0, 1), Events.tx(1), Events.TABLE, null, after))
            .only();
    Struct value = ((Struct) part.value()).getStruct("after");
    assertEquals("__debezium_unavailable_value", value.get("big"));
    assertArrayEquals(
        "__debezium_unavailable_value".getBytes(StandardCharsets.UTF_8), (byte[]) value.get("bin"));
    assertNull(value.get("nums"));
    assertEquals(List.of("__debezium_unavailable_value"), value.get("texts"));
    assertNull(value.get("n"));
    assertNull(value.get("raw"));
    Map<String, Object> headers = new java.util.LinkedHashMap<>();
    for (Header h : part.headers()) {
      if (!h.key().startsWith(ChangeRecords.CONTEXT_HEADER)) {
        headers.put(h.key(), h.value());
      }
    }
    assertEquals(
        Map.of(
            "datum.unchanged_toast.after.big", "placeholder",
            "datum.unchanged_toast.after.bin", "placeholder",
            "datum.unchanged_toast.after.nums", "null",
            "datum.unchanged_toast.after.texts", "placeholder",
            "datum.unrepresentable.after.n", "NaN",
            "datum.undecoded.after.raw", "not-an-int"),
        headers);
  }

  /** Precise decimals with typmod scale, VariableScaleDecimal without, string mode. */
  @Test
  void numericModesAndVariableScale() {
    List<ColumnInfo> cols =
        columns(
            col("id", 23, true),
            new ColumnInfo("fixed", 1700, ((10 << 16) | 2) + 4, false),
            col("free", 1700, false));
    Struct after =
        ((Struct)
                convert(
                        records(),
                        Events.insert(cols, 1, new BigDecimal("1.50"), new BigDecimal("12.340")))
                    .only()
                    .value())
            .getStruct("after");
    assertEquals(new BigDecimal("1.50"), after.get("fixed"));
    assertEquals("2", after.schema().field("fixed").schema().parameters().get("scale"));
    assertEquals(
        "10", after.schema().field("fixed").schema().parameters().get("connect.decimal.precision"));
    Struct free = after.getStruct("free");
    assertEquals("io.debezium.data.VariableScaleDecimal", free.schema().name());
    assertEquals(3, free.get("scale"));
    assertArrayEquals(new java.math.BigInteger("12340").toByteArray(), (byte[]) free.get("value"));

    RecordSettings strings =
        new RecordSettings(
            "srv",
            "db",
            true,
            null,
            RecordSettings.DecimalMode.STRING,
            RecordSettings.IntervalMode.STRING,
            RecordSettings.TimePrecisionMode.ADAPTIVE,
            "x",
            "v");
    Collected sink = new Collected();
    new ChangeRecords(strings)
        .convert(Events.insert(cols, 1, Double.POSITIVE_INFINITY, new BigDecimal("1E+3")), sink);
    Struct s = ((Struct) sink.only().value()).getStruct("after");
    assertEquals("Infinity", s.get("fixed"));
    assertEquals("1000", s.get("free"));
  }

  /** User types: enums, domains with their typmod, arrays of both, extension types as text. */
  @Test
  void enumsDomainsAndArraysComeFromTheColumnTypes() {
    PgType mood =
        new PgType(20000, "public", "mood", Kind.ENUM, null, null, -1, List.of("sad", "ok"));
    PgType money2 =
        new PgType(
            20002,
            "public",
            "money2",
            Kind.DOMAIN,
            null,
            PgType.builtin(1700),
            ((8 << 16) | 2) + 4,
            List.of());
    PgType hstore = PgType.of(20004, "public", "hstore", Kind.BASE);
    List<ColumnInfo> cols =
        columns(
            col("id", 23, true),
            col("m", mood),
            col("ms", PgType.arrayOf(20001, "public", "_mood", mood)),
            col("d", money2),
            col("ds", PgType.arrayOf(20003, "public", "_money2", money2)),
            col("h", hstore),
            col("hs", PgType.arrayOf(20005, "public", "_hstore", hstore)),
            col("gone", 99999, false));
    Struct after =
        ((Struct)
                convert(
                        records(),
                        Events.insert(
                            cols,
                            1,
                            "ok",
                            java.util.Arrays.asList("sad", null),
                            new BigDecimal("3.10"),
                            List.of(new BigDecimal("1.00")),
                            "\"a\"=>\"b\"",
                            "{\"\\\"a\\\"=>\\\"b\\\"\"}",
                            "text"))
                    .only()
                    .value())
            .getStruct("after");
    Schema m = after.schema().field("m").schema();
    assertEquals("io.debezium.data.Enum", m.name());
    assertEquals("sad,ok", m.parameters().get("allowed"));
    assertEquals("ok", after.get("m"));
    assertEquals(java.util.Arrays.asList("sad", null), after.get("ms"));
    assertEquals("io.debezium.data.Enum", after.schema().field("ms").schema().valueSchema().name());
    assertEquals(new BigDecimal("3.10"), after.get("d"));
    assertEquals(List.of(new BigDecimal("1.00")), after.get("ds"));
    assertEquals(Schema.Type.STRING, after.schema().field("hs").schema().type());
    assertEquals("text", after.get("gone"));
  }

  /**
   * An array in the other form than expected (its text for an ARRAY column, a List for a text one)
   * goes to the header, never into the field.
   */
  @Test
  void anArrayInTheUnexpectedFormGoesToTheHeader() {
    List<ColumnInfo> cols =
        columns(col("id", 23, true), col("ints", 1007, false), col("points", 1017, false));
    Collected.Part part =
        convert(records(), Events.insert(cols, 1, "{1,2}", List.of("(1,2)"))).only();
    Struct after = ((Struct) part.value()).getStruct("after");
    assertNull(after.get("ints"));
    assertNull(after.get("points"));
    Map<String, Object> headers = new java.util.LinkedHashMap<>();
    for (Header h : part.headers()) {
      if (!h.key().startsWith(ChangeRecords.CONTEXT_HEADER)) {
        headers.put(h.key(), h.value());
      }
    }
    assertEquals(
        Map.of(
            "datum.unrepresentable.after.ints", "{1,2}",
            "datum.unrepresentable.after.points", "[(1,2)]"),
        headers);
  }

  /** An array column declared with two dimensions nests two ARRAYs deep. */
  @Test
  void declaredDimensionsNestTheSchema() {
    List<ColumnInfo> cols =
        columns(
            col("id", 23, true),
            new ColumnInfo("grid", 1231, -1, false, PgType.builtin(1231), 2, -1));
    ChangeRecords records = records();
    BigDecimal one = new BigDecimal("1");
    Collected.Part part =
        convert(
                records,
                Events.insert(
                    cols, 1, List.of(List.of(one), java.util.Arrays.asList(Double.NaN, null))))
            .only();
    Struct after = ((Struct) part.value()).getStruct("after");
    Schema grid = after.schema().field("grid").schema();
    assertEquals(Schema.Type.ARRAY, grid.valueSchema().type());
    assertEquals("io.debezium.data.VariableScaleDecimal", grid.valueSchema().valueSchema().name());
    List<?> rows = (List<?>) after.get("grid");
    assertEquals(0, ((Struct) ((List<?>) rows.get(0)).get(0)).get("scale"));
    assertEquals(java.util.Arrays.asList(null, null), rows.get(1));
    assertEquals(
        "[[1], [NaN, null]]",
        part.headers().lastWithName("datum.unrepresentable.after.grid").value());

    Collected.Part flat = convert(records, Events.insert(cols, 2, List.of(one))).only();
    assertNull(((Struct) flat.value()).getStruct("after").get("grid"));
    assertEquals("[1]", flat.headers().lastWithName("datum.unrepresentable.after.grid").value());
  }

  /** A value whose class contradicts its column names table, column, oid and class. */
  @Test
  void aValueOfTheWrongClassIsAClearError() {
    List<ColumnInfo> cols = columns(col("id", 23, true), col("at", 1184, false));
    DataException e =
        assertThrows(
            DataException.class,
            () -> records().convert(Events.insert(cols, 1, "2026-01-01"), new Collected()));
    assertEquals(
        "cannot convert column \"at\" of table public.t (type oid 1184, typmod -1, mapped as"
            + " timestamptz): the library gave a value of class java.lang.String, which that type"
            + " never decodes to (class java.lang.String cannot be cast to class java.time.Instant"
            + " (java.lang.String and java.time.Instant are in module java.base of loader"
            + " 'bootstrap'))",
        e.getMessage());
  }

  /** Infinities, 24:00, and the interval forms, as Debezium's constants and formulas give them. */
  @Test
  void temporalSpecialValues() {
    assertEquals(Temporals.DATE_POSITIVE_INFINITY, Temporals.epochDay(java.time.LocalDate.MAX));
    assertEquals(86_400_000_000L, Temporals.microOfDay(java.time.LocalTime.MAX));
    assertEquals(86_400_000, Temporals.milliOfDay(java.time.LocalTime.MAX));
    assertEquals(
        "24:00:00Z",
        Temporals.zonedTime(java.time.OffsetTime.of(java.time.LocalTime.MAX, ZoneOffset.UTC)));
    assertEquals(
        "22:00:00Z",
        Temporals.zonedTime(
            java.time.OffsetTime.of(java.time.LocalTime.MAX, ZoneOffset.ofHours(2))));
    assertEquals("infinity", Temporals.zonedTimestamp(Instant.MAX, 6));
    assertEquals(
        "2026-11-30T08:18:40.123400Z",
        Temporals.zonedTimestamp(Instant.parse("2026-11-30T08:18:40.1234Z"), 6));
    assertEquals(
        Temporals.TIMESTAMP_POSITIVE_INFINITY_MICROS,
        Temporals.epochMicros(java.time.LocalDateTime.MAX));
    assertEquals(
        "P1Y2M3DT4H5M6.5S",
        Temporals.intervalString(new io.datum.cdc.event.PgInterval(14, 3, 14_706_500_000L)));
    assertEquals(
        "P0Y0M0DT0H0M0S", Temporals.intervalString(new io.datum.cdc.event.PgInterval(0, 0, 0)));
    assertEquals(
        "P0Y-1M0DT-1H-2M-3.25S",
        Temporals.intervalString(new io.datum.cdc.event.PgInterval(-1, 0, -3_723_250_000L)));
    // Debezium: ((years*12 + months) * 30.4375 + days) days, then h, m, s
    assertEquals(
        37_091_106_500_000L,
        Temporals.durationMicros(new io.datum.cdc.event.PgInterval(14, 3, 14_706_500_000L)));
  }
}
