package io.datum.cdc.cli.json;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.PgInterval;
import io.datum.cdc.event.PgJson;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class JsonLinesWriterTest {

  // PostgreSQL type OIDs (pg_type.dat)
  static final int BOOL = 16;
  static final int BYTEA = 17;
  static final int INT8 = 20;
  static final int INT2 = 21;
  static final int INT4 = 23;
  static final int TEXT = 25;
  static final int OID = 26;
  static final int JSON = 114;
  static final int FLOAT4 = 700;
  static final int FLOAT8 = 701;
  static final int INET = 869;
  static final int INT4_ARRAY = 1007;
  static final int TEXT_ARRAY = 1009;
  static final int DATE = 1082;
  static final int TIME = 1083;
  static final int TIMESTAMP = 1114;
  static final int TIMESTAMPTZ = 1184;
  static final int INTERVAL = 1186;
  static final int NUMERIC_ARRAY = 1231;
  static final int TIMETZ = 1266;
  static final int NUMERIC = 1700;
  static final int UUID_OID = 2950;
  static final int JSONB = 3802;

  static final ObjectMapper MAPPER =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  static final PgLsn COMMIT_LSN = PgLsn.parse("0/16B3748");
  static final PgLsn END_LSN = PgLsn.parse("0/16B37A0");
  static final Instant COMMIT_TIME = Instant.parse("2026-11-30T10:18:40.123456Z");
  static final TransactionInfo TX =
      new TransactionInfo(741, COMMIT_LSN, END_LSN, COMMIT_TIME, null, 3);
  static final TableId ORDERS = new TableId("public", "orders");

  /** Everything of a row-change line between "op" and "key", for slot s, xid 741, event 0 of 3. */
  static final String POSITION =
      "\"xid\":741,\"commit_lsn\":\"0/16B3748\",\"tx_end_lsn\":\"0/16B37A0\","
          + "\"event_index\":0,\"event_count\":3,\"lsn\":\"0/16B3748\","
          + "\"commit_time\":\"2026-11-30T10:18:40.123456Z\"";

  static CdcOffset offset(int index) {
    return new CdcOffset("s", END_LSN, COMMIT_LSN, 741, index, 3);
  }

  static ColumnInfo col(String name, int oid, boolean key) {
    return new ColumnInfo(name, oid, -1, key);
  }

  static Row row(List<ColumnInfo> columns, Object... values) {
    return Row.of(columns, values);
  }

  /**
   * Writes one event and returns its line without the '\n', after checking that exactly one
   * newline-terminated line was written and that it parses as exactly one JSON object.
   */
  static String line(ChangeEvent event) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JsonLinesWriter writer = new JsonLinesWriter(out);
    writer.write(event);
    writer.flush();
    String text = out.toString(UTF_8);
    assertTrue(text.endsWith("\n"), text);
    String line = text.substring(0, text.length() - 1);
    assertEquals(-1, line.indexOf('\n'), "one line only: " + text);
    assertEquals(-1, line.indexOf('\r'), "no CR: " + text);
    assertTrue(parse(line).isObject());
    return line;
  }

  static JsonNode parse(String line) {
    try {
      return MAPPER.readTree(line);
    } catch (IOException e) {
      throw new AssertionError("not valid JSON: " + line, e);
    }
  }

  static String insertLine(String table, String key, String after) {
    return "{\"op\":\"insert\",\"slot\":\"s\",\"schema\":\"public\",\"table\":\""
        + table
        + "\","
        + POSITION
        + ",\"key\":"
        + key
        + ",\"before\":null,\"after\":"
        + after
        + ",\"unchanged_toast\":[]}";
  }

  // ---- row changes ----------------------------------------------------------------------------

  @Test
  void undecodedValuesAreWrittenRawAsStringsAndListedInUndecoded() {
    // the decode-error policy RAW: an int4 key as its text (a string, not a number), an array of
    // a dropped type as its binary bytes (base64), named once in "undecoded" after unchanged_toast
    List<ColumnInfo> columns =
        List.of(col("id", INT4, true), col("ds", 50_001, false), col("note", TEXT, false));
    Row after =
        Row.of(
            columns, new Object[] {"12x", new byte[] {0, 1, (byte) 0xff}, "ok"}, new int[] {0, 1});
    InsertEvent insert = new InsertEvent(offset(0), TX, ORDERS, after);
    assertEquals(
        "{\"op\":\"insert\",\"slot\":\"s\",\"schema\":\"public\",\"table\":\"orders\","
            + POSITION
            + ",\"key\":{\"id\":\"12x\"},\"before\":null,"
            + "\"after\":{\"id\":\"12x\",\"ds\":\"AAH/\",\"note\":\"ok\"},\"unchanged_toast\":[],"
            + "\"undecoded\":[\"id\",\"ds\"]}",
        line(insert));
  }

  @Test
  void designExampleInsertIsReproducedByteForByte() {
    // the example line of the format's original design (JSON lines, format 1), as printed
    List<ColumnInfo> columns = List.of(col("id", INT4, true), col("note", TEXT, false));
    InsertEvent insert =
        new InsertEvent(offset(0), TX, PgLsn.parse("0/16B3690"), ORDERS, row(columns, 1, "x"));
    String expected =
        "{\"op\":\"insert\",\"slot\":\"s\",\"schema\":\"public\",\"table\":\"orders\","
            + "\"xid\":741,\"commit_lsn\":\"0/16B3748\",\"tx_end_lsn\":\"0/16B37A0\","
            + "\"event_index\":0,\"event_count\":3,\"lsn\":\"0/16B3690\","
            + "\"commit_time\":\"2026-11-30T10:18:40.123456Z\","
            + "\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"note\":\"x\"},"
            + "\"unchanged_toast\":[]}";
    assertEquals(expected, line(insert));

    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JsonLinesWriter writer = new JsonLinesWriter(out);
    writer.write(insert);
    writer.flush();
    assertArrayEquals((expected + "\n").getBytes(UTF_8), out.toByteArray());
  }

  @Test
  void insertWithoutReplicaIdentityHasNullKey() {
    List<ColumnInfo> columns = List.of(col("id", INT4, false));
    assertEquals(
        insertLine("orders", "null", "{\"id\":7}"),
        line(new InsertEvent(offset(0), TX, ORDERS, row(columns, 7))));
  }

  @Test
  void updateWithoutOldRowHasNullBefore() {
    List<ColumnInfo> columns = List.of(col("id", INT4, true), col("note", TEXT, false));
    UpdateEvent update = new UpdateEvent(offset(1), TX, ORDERS, null, row(columns, 1, "y"));
    assertEquals(
        "{\"op\":\"update\",\"slot\":\"s\",\"schema\":\"public\",\"table\":\"orders\","
            + POSITION.replace("\"event_index\":0", "\"event_index\":1")
            + ",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"note\":\"y\"},"
            + "\"unchanged_toast\":[]}",
        line(update));
  }

  @Test
  void updateWithKeyOnlyOldRow() {
    List<ColumnInfo> columns = List.of(col("id", INT4, true), col("note", TEXT, false));
    List<ColumnInfo> keyColumns = List.of(col("id", INT4, true));
    UpdateEvent update =
        new UpdateEvent(offset(0), TX, ORDERS, row(keyColumns, 1), row(columns, 2, "y"));
    assertEquals(
        "{\"op\":\"update\",\"slot\":\"s\",\"schema\":\"public\",\"table\":\"orders\","
            + POSITION
            + ",\"key\":{\"id\":2},\"before\":{\"id\":1},\"after\":{\"id\":2,\"note\":\"y\"},"
            + "\"unchanged_toast\":[]}",
        line(update));
  }

  @Test
  void deleteHasKeyAndBeforeFromOldRowAndNullAfter() {
    List<ColumnInfo> keyColumns = List.of(col("id", INT8, true));
    DeleteEvent delete = new DeleteEvent(offset(2), TX, ORDERS, row(keyColumns, 5L));
    assertEquals(
        "{\"op\":\"delete\",\"slot\":\"s\",\"schema\":\"public\",\"table\":\"orders\","
            + POSITION.replace("\"event_index\":0", "\"event_index\":2")
            + ",\"key\":{\"id\":5},\"before\":{\"id\":5},\"after\":null,\"unchanged_toast\":[]}",
        line(delete));
  }

  @Test
  void deleteWithFullOldRowHasOnlyKeyColumnsInKey() {
    List<ColumnInfo> columns = List.of(col("id", INT4, true), col("note", TEXT, false));
    DeleteEvent delete = new DeleteEvent(offset(0), TX, ORDERS, row(columns, 5, "gone"));
    String line = line(delete);
    assertTrue(
        line.endsWith(
            ",\"key\":{\"id\":5},\"before\":{\"id\":5,\"note\":\"gone\"},\"after\":null,"
                + "\"unchanged_toast\":[]}"),
        line);
  }

  @Test
  void unchangedToastColumnsAreListedAndAbsentFromAfter() {
    List<ColumnInfo> columns =
        List.of(
            col("id", INT4, true),
            col("doc", TEXT, false),
            col("n", INT4, false),
            col("blob", BYTEA, false));
    UpdateEvent update =
        new UpdateEvent(
            offset(0),
            TX,
            ORDERS,
            null,
            row(columns, 1, Row.UNCHANGED_TOAST, null, Row.UNCHANGED_TOAST));
    String line = line(update);
    assertTrue(
        line.endsWith(
            ",\"key\":{\"id\":1},\"before\":null,\"after\":{\"id\":1,\"n\":null},"
                + "\"unchanged_toast\":[\"doc\",\"blob\"]}"),
        line);
  }

  @Test
  void unchangedToastIsFilledFromFullOldRowAndNotListed() {
    List<ColumnInfo> columns =
        List.of(col("id", INT4, true), col("doc", TEXT, true), col("n", INT4, true));
    UpdateEvent update =
        new UpdateEvent(
            offset(0),
            TX,
            ORDERS,
            row(columns, 1, "long text", 1),
            row(columns, 1, Row.UNCHANGED_TOAST, 2));
    String line = line(update);
    assertTrue(
        line.endsWith(
            ",\"key\":{\"id\":1,\"doc\":\"long text\",\"n\":2},"
                + "\"before\":{\"id\":1,\"doc\":\"long text\",\"n\":1},"
                + "\"after\":{\"id\":1,\"doc\":\"long text\",\"n\":2},\"unchanged_toast\":[]}"),
        line);
  }

  @Test
  void unchangedToastKeyColumnIsFilledFromKeyOnlyOldRow() {
    List<ColumnInfo> columns =
        List.of(col("doc", TEXT, true), col("n", INT4, false), col("big", TEXT, false));
    List<ColumnInfo> keyColumns = List.of(col("doc", TEXT, true));
    UpdateEvent update =
        new UpdateEvent(
            offset(0),
            TX,
            ORDERS,
            row(keyColumns, "k"),
            row(columns, Row.UNCHANGED_TOAST, 2, Row.UNCHANGED_TOAST));
    String line = line(update);
    assertTrue(
        line.endsWith(
            ",\"key\":{\"doc\":\"k\"},\"before\":{\"doc\":\"k\"},"
                + "\"after\":{\"doc\":\"k\",\"n\":2},\"unchanged_toast\":[\"big\"]}"),
        line);
  }

  @Test
  void originFollowsCommitTimeOnlyWhenPresent() {
    TransactionInfo withOrigin =
        new TransactionInfo(741, COMMIT_LSN, END_LSN, COMMIT_TIME, "pg_16389", 3);
    List<ColumnInfo> columns = List.of(col("id", INT4, true));
    String line = line(new InsertEvent(offset(0), withOrigin, ORDERS, row(columns, 1)));
    assertTrue(
        line.contains(
            "\"commit_time\":\"2026-11-30T10:18:40.123456Z\",\"origin\":\"pg_16389\",\"key\":"),
        line);
    assertFalse(line(new InsertEvent(offset(0), TX, ORDERS, row(columns, 1))).contains("origin"));
  }

  @Test
  void redeliveredFollowsOriginOnlyWhenTrue() {
    TransactionInfo again =
        new TransactionInfo(741, COMMIT_LSN, END_LSN, COMMIT_TIME, "pg_16389", 3, true);
    List<ColumnInfo> columns = List.of(col("id", INT4, true));
    String line = line(new InsertEvent(offset(0), again, ORDERS, row(columns, 1)));
    assertTrue(line.contains("\"origin\":\"pg_16389\",\"redelivered\":true,\"key\":"), line);
    String truncate = line(new TruncateEvent(offset(0), again, List.of(ORDERS), false, false));
    assertTrue(truncate.contains("\"redelivered\":true,\"tables\":"), truncate);
    assertFalse(
        line(new InsertEvent(offset(0), TX, ORDERS, row(columns, 1))).contains("redelivered"));
  }

  @Test
  void aSnapshotResetIsATruncateOfOneTableWithItsSnapshot() {
    PgLsn at = PgLsn.parse("0/1939EB0");
    TransactionInfo chunk =
        new TransactionInfo(0, at, at, Instant.parse("2026-12-03T15:10:02Z"), null, 1);
    TruncateEvent reset =
        new TruncateEvent(
            new io.datum.cdc.CdcOffset("shop", at, at, 0, 0, 1, 7),
            chunk,
            List.of(ORDERS),
            false,
            false,
            new io.datum.cdc.event.SnapshotInfo("request-0/1936078", 7, at, false));
    assertEquals(
        "{\"op\":\"truncate\",\"slot\":\"shop\",\"xid\":0,\"commit_lsn\":\"0/1939EB0\","
            + "\"tx_end_lsn\":\"0/1939EB0\",\"event_index\":0,\"event_count\":1,"
            + "\"lsn\":\"0/1939EB0\","
            + "\"commit_time\":\"2026-12-03T15:10:02Z\","
            + "\"tables\":[{\"schema\":\"public\",\"table\":\"orders\"}],"
            + "\"cascade\":false,\"restart_identity\":false,"
            + "\"snapshot\":{\"id\":\"request-0/1936078\",\"chunk\":7,"
            + "\"consistent_with\":\"0/1939EB0\"}}",
        line(reset).strip());
  }

  @Test
  void commitTimeAlwaysPrintsSecondsAndOnlyNeededFractionDigits() {
    List<ColumnInfo> columns = List.of(col("id", INT4, true));
    TransactionInfo wholeMinute =
        new TransactionInfo(
            741, COMMIT_LSN, END_LSN, Instant.parse("2026-11-30T10:18:00Z"), null, 3);
    assertTrue(
        line(new InsertEvent(offset(0), wholeMinute, ORDERS, row(columns, 1)))
            .contains("\"commit_time\":\"2026-11-30T10:18:00Z\""));
    TransactionInfo tenth =
        new TransactionInfo(
            741, COMMIT_LSN, END_LSN, Instant.parse("2026-11-30T10:18:40.100Z"), null, 3);
    assertTrue(
        line(new InsertEvent(offset(0), tenth, ORDERS, row(columns, 1)))
            .contains("\"commit_time\":\"2026-11-30T10:18:40.1Z\""));
  }

  @Test
  void largeXidAndLsnArePrintedUnsigned() {
    PgLsn high = PgLsn.parse("FFFFFFFF/FFFFFFFF");
    TransactionInfo tx = new TransactionInfo(4_294_967_295L, high, high, COMMIT_TIME, null, 1);
    CdcOffset offset = new CdcOffset("slot_1", high, high, 4_294_967_295L, 0, 1);
    String line = line(new InsertEvent(offset, tx, ORDERS, row(List.of(col("id", INT4, true)), 1)));
    assertTrue(
        line.startsWith(
            "{\"op\":\"insert\",\"slot\":\"slot_1\",\"schema\":\"public\",\"table\":\"orders\","
                + "\"xid\":4294967295,\"commit_lsn\":\"FFFFFFFF/FFFFFFFF\","
                + "\"tx_end_lsn\":\"FFFFFFFF/FFFFFFFF\",\"event_index\":0,\"event_count\":1,"),
        line);
  }

  // ---- truncate and message -------------------------------------------------------------------

  @Test
  void truncateListsTablesAndOptions() {
    TruncateEvent truncate =
        new TruncateEvent(
            offset(0), TX, List.of(ORDERS, new TableId("Sales", "line \"items\"")), true, false);
    assertEquals(
        "{\"op\":\"truncate\",\"slot\":\"s\","
            + POSITION
            + ",\"tables\":[{\"schema\":\"public\",\"table\":\"orders\"},"
            + "{\"schema\":\"Sales\",\"table\":\"line \\\"items\\\"\"}],"
            + "\"cascade\":true,\"restart_identity\":false}",
        line(truncate));
    TruncateEvent restart = new TruncateEvent(offset(0), TX, List.of(ORDERS), false, true);
    assertTrue(line(restart).endsWith(",\"cascade\":false,\"restart_identity\":true}"));
  }

  @Test
  void messageHasBase64Content() {
    MessageEvent message =
        new MessageEvent(offset(0), TX, "audit", "hello, world".getBytes(UTF_8), true);
    assertEquals(
        "{\"op\":\"message\",\"slot\":\"s\","
            + POSITION
            + ",\"prefix\":\"audit\",\"content\":\"aGVsbG8sIHdvcmxk\",\"transactional\":true}",
        line(message));
    MessageEvent binary =
        new MessageEvent(offset(0), TX, "p", new byte[] {0, (byte) 0xFB, (byte) 0xFF}, false);
    assertTrue(
        line(binary).endsWith(",\"prefix\":\"p\",\"content\":\"APv/\",\"transactional\":false}"));
    MessageEvent empty = new MessageEvent(offset(0), TX, "", new byte[0], false);
    assertTrue(line(empty).endsWith(",\"prefix\":\"\",\"content\":\"\",\"transactional\":false}"));
  }

  // ---- values -----------------------------------------------------------------------------------

  /** Asserts the exact JSON text of one value of a column of the given type. */
  static void assertValue(String expectedJson, int typeOid, Object value) {
    List<ColumnInfo> columns = List.of(col("v", typeOid, false));
    String line = line(new InsertEvent(offset(0), TX, ORDERS, row(columns, value)));
    assertEquals(insertLine("orders", "null", "{\"v\":" + expectedJson + "}"), line);
  }

  @Test
  void integerTypesAreNumbers() {
    assertValue("-32768", INT2, (short) -32768);
    assertValue("2147483647", INT4, Integer.MAX_VALUE);
    assertValue("-9223372036854775808", INT8, Long.MIN_VALUE);
    assertValue("4294967295", OID, 4_294_967_295L);
  }

  @Test
  void floatsAreNumbersAndSpecialValuesStrings() {
    assertValue("1.5", FLOAT4, 1.5f);
    assertValue("0.1", FLOAT4, 0.1f); // shortest text of the float, not of its double widening
    assertValue("-0.0", FLOAT4, -0.0f);
    assertValue("0.1", FLOAT8, 0.1d);
    assertValue("3.0", FLOAT8, 3d);
    assertValue("1.0E23", FLOAT8, 1e23);
    assertValue("\"NaN\"", FLOAT4, Float.NaN);
    assertValue("\"Infinity\"", FLOAT4, Float.POSITIVE_INFINITY);
    assertValue("\"-Infinity\"", FLOAT4, Float.NEGATIVE_INFINITY);
    assertValue("\"NaN\"", FLOAT8, Double.NaN);
    assertValue("\"Infinity\"", FLOAT8, Double.POSITIVE_INFINITY);
    assertValue("\"-Infinity\"", FLOAT8, Double.NEGATIVE_INFINITY);
  }

  @Test
  void numericIsExactDecimalText() {
    assertValue("\"12.340\"", NUMERIC, new BigDecimal("12.340"));
    assertValue("\"0.000001\"", NUMERIC, new BigDecimal("1E-6"));
    assertValue("\"1200\"", NUMERIC, new BigDecimal("1.2E+3"));
    assertValue(
        "\"-98765432109876543210.0123456789\"",
        NUMERIC,
        new BigDecimal("-98765432109876543210.0123456789"));
    assertValue("\"NaN\"", NUMERIC, Double.NaN);
    assertValue("\"Infinity\"", NUMERIC, Double.POSITIVE_INFINITY);
    assertValue("\"-Infinity\"", NUMERIC, Double.NEGATIVE_INFINITY);
    // A finite Double in a numeric column is not produced by the decoder; still a string.
    assertValue("\"2.5\"", NUMERIC, 2.5d);
  }

  @Test
  void booleanTextByteaUuid() {
    assertValue("true", BOOL, Boolean.TRUE);
    assertValue("false", BOOL, Boolean.FALSE);
    assertValue("\"plain\"", TEXT, "plain");
    assertValue("\"\"", TEXT, "");
    assertValue("\"AAEC/w==\"", BYTEA, new byte[] {0, 1, 2, (byte) 0xFF});
    assertValue("\"\"", BYTEA, new byte[0]);
    assertValue(
        "\"123e4567-e89b-12d3-a456-426614174000\"",
        UUID_OID,
        UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));
    assertValue("null", TEXT, null);
  }

  @Test
  void stringsAreEscaped() {
    String text = "say \"hi\"\\ \n\r\t\u0001\u001f / é € 😀 \u2028 end";
    assertValue("\"say \\\"hi\\\"\\\\ \\n\\r\\t\\u0001\\u001F / é € 😀 \u2028 end\"", TEXT, text);
    List<ColumnInfo> columns = List.of(col("v", TEXT, false));
    String line = line(new InsertEvent(offset(0), TX, ORDERS, row(columns, text)));
    assertEquals(text, parse(line).get("after").get("v").textValue());
    // Non-ASCII is plain UTF-8; a character outside the BMP is one 4-byte sequence.
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JsonLinesWriter writer = new JsonLinesWriter(out);
    writer.write(new InsertEvent(offset(0), TX, ORDERS, row(columns, "😀")));
    writer.flush();
    byte[] bytes = out.toByteArray();
    byte[] tail = "{\"v\":\"\uD83D\uDE00\"},\"unchanged_toast\":[]}\n".getBytes(UTF_8);
    assertArrayEquals(tail, Arrays.copyOfRange(bytes, bytes.length - tail.length, bytes.length));
    assertArrayEquals(
        new byte[] {(byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80},
        Arrays.copyOfRange(tail, 6, 10));
  }

  @Test
  void jsonIsEmbedded() {
    assertValue("{\"a\":[1,2,{\"b\":null}]}", JSONB, new PgJson("{\"a\":[1,2,{\"b\":null}]}"));
    assertValue("{\"a\": 1, \"b\": \"x\"}", JSONB, new PgJson("{\"a\": 1, \"b\": \"x\"}"));
    assertValue("\"str\"", JSON, new PgJson("\"str\""));
    assertValue("42", JSON, new PgJson("42"));
    assertValue("null", JSON, new PgJson("null"));
    assertValue("{\"e\":\"é😀\"}", JSONB, new PgJson("{\"e\":\"é😀\"}"));
    // A json (not jsonb) value keeps its line breaks; they are whitespace and become spaces.
    assertValue(
        "{  \"a\": \"x\\ny\",    \"b\": 2 }",
        JSON,
        new PgJson("{\n \"a\": \"x\\ny\",\r\n  \"b\": 2\n}"));
    List<ColumnInfo> columns = List.of(col("v", JSONB, false));
    Row row = row(columns, new PgJson("{\"k\":[true]}"));
    JsonNode after = parse(line(new InsertEvent(offset(0), TX, ORDERS, row))).get("after");
    assertTrue(after.get("v").isObject());
    assertTrue(after.get("v").get("k").get(0).booleanValue());
  }

  @Test
  void dates() {
    assertValue("\"2026-11-30\"", DATE, LocalDate.of(2026, 11, 30));
    assertValue("\"0001-01-01\"", DATE, LocalDate.of(1, 1, 1));
    assertValue("\"0000-12-31\"", DATE, LocalDate.of(0, 12, 31)); // 1 BC
    assertValue("\"-0043-03-15\"", DATE, LocalDate.of(-43, 3, 15)); // 44 BC
    assertValue("\"-4713-11-24\"", DATE, LocalDate.of(-4713, 11, 24)); // PostgreSQL's minimum
    assertValue("\"+10000-01-01\"", DATE, LocalDate.of(10000, 1, 1));
    assertValue("\"+5874897-12-31\"", DATE, LocalDate.of(5874897, 12, 31)); // PostgreSQL's max
    assertValue("\"infinity\"", DATE, LocalDate.MAX);
    assertValue("\"-infinity\"", DATE, LocalDate.MIN);
  }

  @Test
  void times() {
    assertValue("\"10:18:40.5\"", TIME, LocalTime.of(10, 18, 40, 500_000_000));
    assertValue("\"10:18:00\"", TIME, LocalTime.of(10, 18));
    assertValue("\"00:00:00\"", TIME, LocalTime.MIDNIGHT);
    assertValue("\"23:59:59.000001\"", TIME, LocalTime.of(23, 59, 59, 1_000));
    assertValue("\"23:59:59.123456\"", TIME, LocalTime.of(23, 59, 59, 123_456_999));
    assertValue("\"10:18:40+02:00\"", TIMETZ, OffsetTime.of(10, 18, 40, 0, ZoneOffset.ofHours(2)));
    assertValue(
        "\"10:18:40.25+00:00\"", TIMETZ, OffsetTime.of(10, 18, 40, 250_000_000, ZoneOffset.UTC));
    assertValue(
        "\"01:02:03-09:30\"",
        TIMETZ,
        OffsetTime.of(1, 2, 3, 0, ZoneOffset.ofHoursMinutes(-9, -30)));
    assertValue(
        "\"01:02:03+00:19:32\"",
        TIMETZ,
        OffsetTime.of(1, 2, 3, 0, ZoneOffset.ofHoursMinutesSeconds(0, 19, 32)));
  }

  @Test
  void timestamps() {
    assertValue(
        "\"2026-11-30T10:18:40.123456\"",
        TIMESTAMP,
        LocalDateTime.of(2026, 11, 30, 10, 18, 40, 123_456_000));
    assertValue("\"2026-11-30T10:18:00\"", TIMESTAMP, LocalDateTime.of(2026, 11, 30, 10, 18));
    assertValue("\"-0043-03-15T12:00:00\"", TIMESTAMP, LocalDateTime.of(-43, 3, 15, 12, 0));
    assertValue("\"infinity\"", TIMESTAMP, LocalDateTime.MAX);
    assertValue("\"-infinity\"", TIMESTAMP, LocalDateTime.MIN);
    assertValue(
        "\"2026-11-30T08:18:40.123456Z\"",
        TIMESTAMPTZ,
        Instant.parse("2026-11-30T08:18:40.123456Z"));
    assertValue("\"2026-11-30T08:18:40Z\"", TIMESTAMPTZ, Instant.parse("2026-11-30T08:18:40Z"));
    assertValue(
        "\"1969-12-31T23:59:59.999999Z\"", TIMESTAMPTZ, Instant.ofEpochSecond(-1, 999_999_000));
    assertValue("\"-0043-03-15T00:00:00Z\"", TIMESTAMPTZ, Instant.parse("-0043-03-15T00:00:00Z"));
    assertValue(
        "\"+294276-12-31T23:59:59.999999Z\"",
        TIMESTAMPTZ,
        Instant.parse("+294276-12-31T23:59:59.999999Z"));
    assertValue("\"infinity\"", TIMESTAMPTZ, Instant.MAX);
    assertValue("\"-infinity\"", TIMESTAMPTZ, Instant.MIN);
  }

  @Test
  void intervalIsIso8601() {
    assertValue("\"P1Y2M3DT4H5M6.5S\"", INTERVAL, new PgInterval(14, 3, 14_706_500_000L));
    assertValue("\"PT0S\"", INTERVAL, new PgInterval(0, 0, 0));
    assertValue("\"P-1Y-2MT-3H\"", INTERVAL, new PgInterval(-14, 0, -10_800_000_000L));
  }

  @Test
  void arraysAreJsonArraysNestedWithNulls() {
    assertValue("[[1,null],[3,4]]", INT4_ARRAY, List.of(Arrays.asList(1, null), List.of(3, 4)));
    assertValue("[]", INT4_ARRAY, List.of());
    assertValue("[\"a\",null,\"b \\\"c\\\"\"]", TEXT_ARRAY, Arrays.asList("a", null, "b \"c\""));
    assertValue(
        "[\"12.340\",\"NaN\",null]",
        NUMERIC_ARRAY,
        Arrays.asList(new BigDecimal("12.340"), Double.NaN, null));
    List<Object> linked = new LinkedList<>(List.of(1.5d, Double.NEGATIVE_INFINITY));
    assertValue("[1.5,\"-Infinity\"]", 1022, linked);
    List<Object> dates = new ArrayList<>(List.of(LocalDate.of(2026, 1, 2), LocalDate.MAX));
    assertValue("[\"2026-01-02\",\"infinity\"]", 1182, dates);
  }

  @Test
  void otherTypesAreStrings() {
    assertValue("\"192.168.0.1/24\"", INET, "192.168.0.1/24");
    assertValue("\"happy\"", 16_500, "happy"); // an enum
    assertValue(
        "\"x-y\"",
        16_600,
        new Object() {
          @Override
          public String toString() {
            return "x-y";
          }
        });
  }

  @Test
  void allTypesInOneRowKeepColumnOrder() {
    List<ColumnInfo> columns =
        List.of(
            col("i", INT4, true),
            col("r", FLOAT4, false),
            col("n", NUMERIC, false),
            col("b", BOOL, false),
            col("t", TEXT, false),
            col("bytes", BYTEA, false),
            col("j", JSONB, false),
            col("d", DATE, false),
            col("tm", TIME, false),
            col("ts", TIMESTAMP, false),
            col("tz", TIMESTAMPTZ, false),
            col("iv", INTERVAL, false),
            col("a", INT4_ARRAY, false),
            col("z", TEXT, false));
    Row after =
        row(
            columns,
            1,
            Float.NaN,
            new BigDecimal("12.340"),
            true,
            "x",
            new byte[] {1},
            new PgJson("[1]"),
            LocalDate.of(-43, 3, 15),
            LocalTime.of(10, 18, 40, 500_000_000),
            LocalDateTime.MAX,
            Instant.MIN,
            new PgInterval(0, 1, 0),
            Arrays.asList(Arrays.asList(1, null), Arrays.asList((Object) null, 2)),
            null);
    assertEquals(
        insertLine(
            "orders",
            "{\"i\":1}",
            "{\"i\":1,\"r\":\"NaN\",\"n\":\"12.340\",\"b\":true,\"t\":\"x\",\"bytes\":\"AQ==\","
                + "\"j\":[1],\"d\":\"-0043-03-15\",\"tm\":\"10:18:40.5\",\"ts\":\"infinity\","
                + "\"tz\":\"-infinity\",\"iv\":\"P1D\",\"a\":[[1,null],[null,2]],\"z\":null}"),
        line(new InsertEvent(offset(0), TX, ORDERS, after)));
  }

  // ---- the writer -------------------------------------------------------------------------------

  @Test
  void eachEventIsOneLineWithNothingBetween() {
    List<ColumnInfo> columns = List.of(col("id", INT4, true));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JsonLinesWriter writer = new JsonLinesWriter(out);
    writer.write(new InsertEvent(offset(0), TX, ORDERS, row(columns, 1)));
    writer.write(new InsertEvent(offset(1), TX, ORDERS, row(columns, 2)));
    writer.write(new DeleteEvent(offset(2), TX, ORDERS, row(columns, 1)));
    writer.flush();
    String[] lines = out.toString(UTF_8).split("\n", -1);
    assertEquals(4, lines.length);
    assertEquals("", lines[3]);
    for (int i = 0; i < 3; i++) {
      assertTrue(lines[i].startsWith("{\"op\":"), lines[i]);
      assertEquals(i, parse(lines[i]).get("event_index").intValue());
    }
  }

  @Test
  void writerTargetGetsTheSameText() {
    List<ColumnInfo> columns = List.of(col("id", INT4, true), col("note", TEXT, false));
    InsertEvent insert = new InsertEvent(offset(0), TX, ORDERS, row(columns, 1, "é😀"));
    StringWriter out = new StringWriter();
    JsonLinesWriter writer = new JsonLinesWriter(out);
    writer.write(insert);
    writer.flush();
    assertEquals(line(insert) + "\n", out.toString());
  }

  @Test
  void closeFlushesButLeavesTheTargetOpen() {
    class Target extends ByteArrayOutputStream {
      boolean closed;

      @Override
      public void close() {
        closed = true;
      }
    }
    Target out = new Target();
    JsonLinesWriter writer = new JsonLinesWriter(out);
    writer.write(new InsertEvent(offset(0), TX, ORDERS, row(List.of(col("id", INT4, true)), 1)));
    writer.close();
    writer.close();
    assertFalse(out.closed);
    assertTrue(out.toString(UTF_8).endsWith("}\n"));
    assertThrows(IllegalStateException.class, writer::flush);
  }

  @Test
  void failedTargetBreaksTheWriter() {
    OutputStream failing =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            throw new IOException("disk full");
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            throw new IOException("disk full");
          }
        };
    JsonLinesWriter writer = new JsonLinesWriter(failing);
    InsertEvent insert =
        new InsertEvent(offset(0), TX, ORDERS, row(List.of(col("id", INT4, true)), 1));
    writer.write(insert); // buffered
    assertThrows(UncheckedIOException.class, writer::flush);
    assertThrows(IllegalStateException.class, () -> writer.write(insert));
  }
}
