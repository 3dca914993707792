package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TransactionInfo;
import java.time.Instant;
import java.util.List;

/** Builds library events for unit tests, as the source would deliver them. */
final class Events {

  static final TableId TABLE = new TableId("public", "t");
  static final Instant COMMIT = Instant.parse("2026-11-30T08:18:40.123456Z");
  static final PgLsn COMMIT_LSN = PgLsn.of(0x16B3748L);
  static final PgLsn END_LSN = PgLsn.of(0x16B3780L);

  /** The end LSN of the transaction before the test transaction. */
  static final PgLsn PREVIOUS_END_LSN = PgLsn.of(0x16B3010L);

  /** The WAL position of the test events' change, before the commit record. */
  static final PgLsn CHANGE_LSN = PgLsn.of(0x16B3700L);

  /** Not instantiated. */
  private Events() {}

  /** The transaction of the test events. */
  static TransactionInfo tx(int events) {
    return new TransactionInfo(
        771, COMMIT_LSN, END_LSN, COMMIT, null, events, false, PREVIOUS_END_LSN);
  }

  /** An offset in the test transaction. */
  static CdcOffset offset(int index, int count) {
    return new CdcOffset("slot", END_LSN, COMMIT_LSN, 771, index, count);
  }

  /** An insert of one row. */
  static InsertEvent insert(List<ColumnInfo> columns, Object... values) {
    return new InsertEvent(offset(0, 1), tx(1), CHANGE_LSN, TABLE, Row.of(columns, values));
  }

  /** A delete of one (old) row. */
  static DeleteEvent delete(List<ColumnInfo> columns, Object... values) {
    return new DeleteEvent(offset(0, 1), tx(1), CHANGE_LSN, TABLE, Row.of(columns, values));
  }
}
