package io.datum.cdc.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChangeEventsTest {

  private static final PgLsn COMMIT = PgLsn.parse("0/16B3748");
  private static final PgLsn END = PgLsn.parse("0/16B37A0");
  private static final CdcOffset OFFSET = new CdcOffset("s", END, COMMIT, 741L, 0, 1);
  private static final TransactionInfo TX =
      new TransactionInfo(741L, COMMIT, END, Instant.parse("2026-11-30T10:18:40.123456Z"), null, 1);
  private static final TableId ORDERS = new TableId("public", "orders");

  private static final List<ColumnInfo> KEYED =
      List.of(new ColumnInfo("id", 23, -1, true), new ColumnInfo("note", 25, -1, false));
  private static final List<ColumnInfo> UNKEYED =
      List.of(new ColumnInfo("id", 23, -1, false), new ColumnInfo("note", 25, -1, false));

  @Test
  void changeKindJsonNames() {
    assertEquals("insert", ChangeKind.INSERT.jsonName());
    assertEquals("update", ChangeKind.UPDATE.jsonName());
    assertEquals("delete", ChangeKind.DELETE.jsonName());
    assertEquals("truncate", ChangeKind.TRUNCATE.jsonName());
    assertEquals("message", ChangeKind.MESSAGE.jsonName());
    assertEquals("read", ChangeKind.READ.jsonName());
    assertEquals(6, ChangeKind.values().length);
  }

  @Test
  void aReadEventNeedsASnapshotOffsetAndTakesItsKeyFromTheRow() {
    CdcOffset read = new CdcOffset("s", PgLsn.parse("0/10"), PgLsn.parse("0/10"), 0, 2, 5, 7);
    assertTrue(read.isSnapshotRead());
    assertEquals("s@snapshot chunk 7#2/5", read.toString());
    Row after = Row.of(KEYED, new Object[] {1, "x"});
    ReadEvent e =
        new ReadEvent(
            read, TX, ORDERS, after, new SnapshotInfo("initial", 7, PgLsn.parse("0/10"), false));
    assertEquals(ChangeKind.READ, e.kind());
    assertEquals(1, e.key().get("id"));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ReadEvent(OFFSET, TX, ORDERS, after, e.snapshot()));
    assertThrows(
        IllegalArgumentException.class,
        () -> new CdcOffset("s", PgLsn.parse("0/10"), PgLsn.parse("0/10"), 0, 0, 1, -1));
    assertThrows(IllegalArgumentException.class, () -> new SnapshotInfo("x", 0, PgLsn.ZERO, false));
  }

  @Test
  void insertKeyComesFromAfter() {
    Row after = Row.of(KEYED, new Object[] {1, "x"});
    InsertEvent e = new InsertEvent(OFFSET, TX, ORDERS, after);
    assertEquals(ChangeKind.INSERT, e.kind());
    assertEquals(List.of("id"), new ArrayList<>(e.key().toMap().keySet()));
    assertEquals(1, e.key().get("id"));
    assertNull(new InsertEvent(OFFSET, TX, ORDERS, Row.of(UNKEYED, new Object[] {1, "x"})).key());
  }

  @Test
  void updateKeyComesFromAfter() {
    Row before = Row.of(KEYED, new Object[] {1, "old"});
    Row after = Row.of(KEYED, new Object[] {2, "new"});
    UpdateEvent e = new UpdateEvent(OFFSET, TX, ORDERS, before, after);
    assertEquals(ChangeKind.UPDATE, e.kind());
    assertEquals(2, e.key().get("id"));
    assertEquals(1, e.key().size());
    UpdateEvent noBefore = new UpdateEvent(OFFSET, TX, ORDERS, null, after);
    assertNull(noBefore.before());
    assertEquals(2, noBefore.key().get("id"));
  }

  @Test
  void deleteKeyComesFromBefore() {
    Row before = Row.of(KEYED, new Object[] {3, "x"});
    DeleteEvent e = new DeleteEvent(OFFSET, TX, ORDERS, before);
    assertEquals(ChangeKind.DELETE, e.kind());
    assertEquals(3, e.key().get("id"));
    assertNull(new DeleteEvent(OFFSET, TX, ORDERS, null).key());
    Row keyOnly = Row.of(List.of(new ColumnInfo("id", 23, -1, true)), new Object[] {3});
    assertSame(keyOnly, new DeleteEvent(OFFSET, TX, ORDERS, keyOnly).key());
  }

  @Test
  void rowChangesRejectNulls() {
    Row row = Row.of(KEYED, new Object[] {1, "x"});
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> new InsertEvent(OFFSET, TX, ORDERS, null));
    assertEquals("after", e.getMessage());
    assertEquals(
        "offset",
        assertThrows(NullPointerException.class, () -> new InsertEvent(null, TX, ORDERS, row))
            .getMessage());
    assertEquals(
        "transaction",
        assertThrows(
                NullPointerException.class, () -> new UpdateEvent(OFFSET, null, ORDERS, row, row))
            .getMessage());
    assertEquals(
        "table",
        assertThrows(NullPointerException.class, () -> new DeleteEvent(OFFSET, TX, null, row))
            .getMessage());
    assertEquals(
        "after",
        assertThrows(
                NullPointerException.class, () -> new UpdateEvent(OFFSET, TX, ORDERS, row, null))
            .getMessage());
  }

  @Test
  void truncateCopiesTables() {
    List<TableId> tables = new ArrayList<>(List.of(ORDERS, new TableId("app", "items")));
    TruncateEvent e = new TruncateEvent(OFFSET, TX, tables, true, false);
    tables.clear();
    assertEquals(ChangeKind.TRUNCATE, e.kind());
    assertEquals(List.of(ORDERS, new TableId("app", "items")), e.tables());
    assertThrows(UnsupportedOperationException.class, () -> e.tables().add(ORDERS));
    assertEquals(true, e.cascade());
    assertEquals(false, e.restartIdentity());
  }

  @Test
  void message() {
    byte[] content = {1, 2};
    MessageEvent e = new MessageEvent(OFFSET, TX, "pfx", content, false);
    assertEquals(ChangeKind.MESSAGE, e.kind());
    assertEquals("pfx", e.prefix());
    assertSame(content, e.content());
    assertEquals(
        "content",
        assertThrows(
                NullPointerException.class, () -> new MessageEvent(OFFSET, TX, "p", null, true))
            .getMessage());
  }

  @Test
  void tableIdAndJsonToString() {
    assertEquals("public.orders", ORDERS.toString());
    assertEquals("{\"a\": 1}", new PgJson("{\"a\": 1}").toString());
  }
}
