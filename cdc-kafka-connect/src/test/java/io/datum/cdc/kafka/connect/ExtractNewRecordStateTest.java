package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.SnapshotInfo;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import io.debezium.transforms.ExtractNewRecordState;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Debezium's own {@code ExtractNewRecordState} (debezium-connect-plugins 3.6.1), configured as a
 * user would, flattens our records as it flattens Debezium's: inserts, updates and snapshot rows to
 * the new row, deletes per {@code delete.tombstone.handling.mode}, truncates and tombstones dropped
 * or kept as it documents, {@code add.fields} read from our envelope and source block.
 */
class ExtractNewRecordStateTest {

  private static final List<ColumnInfo> COLUMNS =
      List.of(new ColumnInfo("id", 23, -1, true), new ColumnInfo("note", 25, -1, false));

  private final ExtractNewRecordState<SourceRecord> smt = new ExtractNewRecordState<>();

  /** Closes the SMT. */
  @AfterEach
  void close() {
    smt.close();
  }

  /** The records of an insert, an update, a delete and its tombstone, a truncate, a read. */
  private static List<SourceRecord> records() {
    ChangeRecords records =
        new ChangeRecords(
            RecordSettings.defaults("srv", "db", "0.1.0"),
            Clock.fixed(Instant.parse("2026-12-01T00:00:00Z"), ZoneOffset.UTC));
    TransactionInfo tx = Events.tx(4);
    List<ChangeEvent> events =
        List.of(
            new InsertEvent(Events.offset(0, 4), tx, lsn(0), Events.TABLE, row(1, "a")),
            new UpdateEvent(Events.offset(1, 4), tx, lsn(1), Events.TABLE, null, row(1, "b")),
            new DeleteEvent(
                Events.offset(2, 4),
                tx,
                lsn(2),
                Events.TABLE,
                Row.of(List.of(COLUMNS.get(0)), new Object[] {1})),
            new TruncateEvent(Events.offset(3, 4), tx, List.of(Events.TABLE), false, false),
            read());
    List<SourceRecord> out = new ArrayList<>();
    for (ChangeEvent e : events) {
      records.convert(
          e,
          (topic, keySchema, key, valueSchema, value, ts, headers) ->
              out.add(
                  new SourceRecord(
                      Map.of("slot", "s"),
                      Map.of("lsn", 1L),
                      topic,
                      null,
                      keySchema,
                      key,
                      valueSchema,
                      value,
                      ts,
                      headers)));
    }
    assertEquals(6, out.size()); // insert, update, delete, tombstone, truncate, read
    return out;
  }

  /** The WAL position of the test transaction's change {@code i}: each change its own. */
  private static io.datum.cdc.PgLsn lsn(int i) {
    return io.datum.cdc.PgLsn.of(Events.CHANGE_LSN.asLong() + 0x30L * i);
  }

  /** A full row. */
  private static Row row(int id, String note) {
    return Row.of(COLUMNS, new Object[] {id, note});
  }

  /** A snapshot row, the last of its table. */
  private static ReadEvent read() {
    io.datum.cdc.PgLsn at = Events.COMMIT_LSN;
    CdcOffset offset = new CdcOffset("slot", at, at, 0, 0, 1, 7);
    TransactionInfo chunk = new TransactionInfo(0, at, at, Events.COMMIT, null, 1);
    return new ReadEvent(
        offset, chunk, Events.TABLE, row(2, "r"), new SnapshotInfo("initial", 7, at, true));
  }

  /** A Struct's fields as a map. */
  private static Map<String, Object> fields(Object value) {
    Struct s = (Struct) value;
    Map<String, Object> map = new LinkedHashMap<>();
    for (Field f : s.schema().fields()) {
      map.put(f.name(), s.get(f));
    }
    return map;
  }

  /** Defaults: the new row; a delete becomes a null value; tombstones and truncates dropped. */
  @Test
  void defaults() {
    smt.configure(Map.of());
    List<SourceRecord> in = records();
    SourceRecord insert = smt.apply(in.get(0));
    assertEquals(Map.of("id", 1, "note", "a"), fields(insert.value()));
    assertEquals("srv.public.t.Value", insert.valueSchema().name());
    assertEquals(in.get(0).key(), insert.key());
    assertEquals(Map.of("id", 1, "note", "b"), fields(smt.apply(in.get(1)).value()));
    SourceRecord delete = smt.apply(in.get(2));
    assertEquals(in.get(2).key(), delete.key());
    assertNull(delete.value(), "a delete becomes a record with a null value (tombstone mode)");
    assertNull(smt.apply(in.get(3)), "the tombstone is dropped");
    assertNull(smt.apply(in.get(4)), "the truncate is dropped");
    assertEquals(Map.of("id", 2, "note", "r"), fields(smt.apply(in.get(5)).value()));
  }

  /**
   * {@code rewrite}: deletes become the old row with {@code __deleted}; added fields read from our
   * source block: {@code lsn} each change's own position, {@code sequence} Debezium's pair.
   */
  @Test
  void rewriteWithAddedFields() {
    smt.configure(
        Map.of(
            "delete.tombstone.handling.mode",
            "rewrite",
            "add.fields",
            "op,table,lsn,source.ts_ms,sequence"));
    List<SourceRecord> in = records();
    long lsn = Events.COMMIT_LSN.asLong(); // a snapshot row's: its snapshot's position
    String previous = Long.toString(Events.PREVIOUS_END_LSN.asLong());
    long ts = Events.COMMIT.toEpochMilli();
    Map<String, Object> insert = fields(smt.apply(in.get(0)).value());
    assertEquals(
        map(
            "id",
            1,
            "note",
            "a",
            "__deleted",
            "false",
            "__op",
            "c",
            "__table",
            "t",
            "__lsn",
            lsn(0).asLong(),
            "__source_ts_ms",
            ts,
            "__sequence",
            "[\"" + previous + "\",\"" + lsn(0).asLong() + "\"]"),
        insert);
    assertEquals(
        map(
            "id",
            1,
            "note",
            "b",
            "__deleted",
            "false",
            "__op",
            "u",
            "__table",
            "t",
            "__lsn",
            lsn(1).asLong(),
            "__source_ts_ms",
            ts,
            "__sequence",
            "[\"" + previous + "\",\"" + lsn(1).asLong() + "\"]"),
        fields(smt.apply(in.get(1)).value()));
    assertEquals(
        map(
            "id",
            1,
            "note",
            null,
            "__deleted",
            "true",
            "__op",
            "d",
            "__table",
            "t",
            "__lsn",
            lsn(2).asLong(),
            "__source_ts_ms",
            ts,
            "__sequence",
            "[\"" + previous + "\",\"" + lsn(2).asLong() + "\"]"),
        fields(smt.apply(in.get(2)).value()));
    assertNull(smt.apply(in.get(3)), "the tombstone is dropped in rewrite mode");
    assertNull(smt.apply(in.get(4)), "the truncate is dropped");
    assertEquals(
        map(
            "id",
            2,
            "note",
            "r",
            "__deleted",
            "false",
            "__op",
            "r",
            "__table",
            "t",
            "__lsn",
            lsn,
            "__source_ts_ms",
            ts,
            "__sequence",
            "[null,\"" + lsn + "\"]"),
        fields(smt.apply(in.get(5)).value()));
  }

  /** An ordered map of alternating keys and values. */
  private static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }
}
