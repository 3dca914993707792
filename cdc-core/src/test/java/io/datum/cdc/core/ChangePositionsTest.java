package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.StreamingMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.io.StringReader;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.PGConnection;

/**
 * Every event's own WAL position ({@link ChangeEvent#lsn()}) and its transaction's predecessor
 * ({@link io.datum.cdc.event.TransactionInfo#previousTxEndLsn()}), with PostgreSQL as the oracle: a
 * second pgoutput slot created beside the source's, read with {@code
 * pg_logical_slot_peek_binary_changes}, whose {@code lsn} column is the position the walsender
 * writes into each XLogData header (both come from {@code ctx->write_location}, logical.c). The
 * workload has every kind of change, a transactional and a non-transactional message, a COPY (a
 * heap multi-insert: rows sharing one LSN), a transaction of an unpublished table (sent empty by
 * PostgreSQL 14), and a streamed transaction that spills, with an aborted subtransaction.
 */
@EmbeddedPostgresVersions
@EmbeddedPostgresTest(settings = "logical_decoding_work_mem=64kB")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChangePositionsTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** One message of the oracle slot: its LSN column and its pgoutput message type. */
  private record OracleMessage(PgLsn lsn, char type) {}

  /** Acknowledges every event but those of row 99999. */
  private static EventCollector handler() {
    return new EventCollector(
        event ->
            !(event instanceof InsertEvent i
                && Integer.valueOf(99999).equals(i.after().get("id"))));
  }

  @Test
  void everyEventCarriesTheLsnTheWalsenderSentWithItsChange(
      EmbeddedPostgresServer pg, @TempDir Path spill) throws Exception {
    pg.execute(
        "CREATE TABLE pos (id int PRIMARY KEY, v text)",
        "CREATE TABLE unpublished (id int)",
        "CREATE PUBLICATION pos FOR TABLE pos",
        "SELECT pg_create_logical_replication_slot('pos', 'pgoutput')",
        "SELECT pg_create_logical_replication_slot('pos_oracle', 'pgoutput')");
    pg.execute(
        "BEGIN; INSERT INTO pos VALUES (1, 'a'); UPDATE pos SET id = 2 WHERE id = 1;"
            + " SELECT pg_logical_emit_message(true, 'p', 'in'); DELETE FROM pos WHERE id = 2;"
            + " INSERT INTO pos VALUES (3, 'c'); COMMIT",
        "INSERT INTO unpublished VALUES (1)",
        "SELECT pg_logical_emit_message(false, 'p', 'alone')");
    try (Connection c = pg.getConnection()) {
      c.unwrap(PGConnection.class)
          .getCopyAPI()
          .copyIn("COPY pos FROM STDIN", new StringReader("10\tx\n11\tx\n12\tx\n13\tx\n"));
    }
    pg.execute(
        "TRUNCATE pos",
        "BEGIN; INSERT INTO pos SELECT g, repeat('x', 200) FROM generate_series(100, 1099) g;"
            + " SAVEPOINT a; INSERT INTO pos SELECT g, 'gone' FROM generate_series(2000, 2499) g;"
            + " ROLLBACK TO SAVEPOINT a;"
            + " INSERT INTO pos SELECT g, repeat('y', 200) FROM generate_series(3000, 3499) g;"
            + " COMMIT",
        "INSERT INTO pos VALUES (99999, 'last')");

    List<List<OracleMessage>> transactions = new ArrayList<>();
    List<PgLsn> previousOf = new ArrayList<>();
    oracle(pg, transactions, previousOf);
    List<PgLsn> expectedLsns = new ArrayList<>();
    List<PgLsn> expectedPrevious = new ArrayList<>();
    for (int t = 0; t < transactions.size(); t++) {
      for (OracleMessage m : transactions.get(t)) {
        expectedLsns.add(m.lsn());
        expectedPrevious.add(previousOf.get(t));
      }
    }
    // 5 + 1 + 4 + 1 + 1500 + 1 events; the unpublished table's transaction delivers none
    assertEquals(1512, expectedLsns.size(), "the oracle's changes: " + transactions);

    MemoryCheckpointStore store = new MemoryCheckpointStore();
    EventCollector handler = handler();
    List<ChangeEvent> events;
    try (PgCdcSource source = source(pg, store, spill)) {
      source.start(handler);
      events = handler.take(expectedLsns.size(), WAIT);
    }
    List<PgLsn> lsns = new ArrayList<>();
    List<PgLsn> previous = new ArrayList<>();
    for (ChangeEvent e : events) {
      lsns.add(e.lsn());
      previous.add(e.transaction().previousTxEndLsn());
    }
    assertSameList("lsn", expectedLsns, lsns);
    assertSameList("previousTxEndLsn", expectedPrevious, previous);

    // what the assertions above rest on: the LSNs are per change, not per transaction
    ChangeEvent first = events.get(0);
    assertTrue(first.lsn().compareTo(first.transaction().commitLsn()) < 0, first.toString());
    assertTrue(events.get(1).lsn().compareTo(first.lsn()) > 0, events.get(1).toString());
    MessageEvent alone = (MessageEvent) events.get(5);
    assertEquals(false, alone.transactional());
    assertEquals(alone.transaction().commitLsn(), alone.lsn());
    assertEquals(events.get(6).lsn(), events.get(9).lsn(), "a COPY's rows share one WAL record");
    assertNull(events.get(0).transaction().previousTxEndLsn(), "a new store: not known");

    // the last transaction was never acknowledged: a restart delivers it again, its predecessor
    // now the position streaming starts from, which is the end of the acknowledged one before it
    try (PgCdcSource source = source(pg, store, spill)) {
      source.start(handler);
      ChangeEvent again = handler.take(1, WAIT).get(0);
      ChangeEvent before = events.get(events.size() - 1);
      assertEquals(before.lsn(), again.lsn());
      assertNotNull(again.transaction().previousTxEndLsn());
      assertEquals(before.transaction().previousTxEndLsn(), again.transaction().previousTxEndLsn());
    }
  }

  /** Fails naming the first index where the lists differ, rather than printing 1,500 LSNs. */
  private static void assertSameList(String what, List<PgLsn> expected, List<PgLsn> actual) {
    for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
      assertEquals(expected.get(i), actual.get(i), what + " of event " + i);
    }
    assertEquals(expected.size(), actual.size(), what + ": number of events");
  }

  private static PgCdcSource source(
      EmbeddedPostgresServer pg, MemoryCheckpointStore store, Path spill) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .slot("pos")
        .publication("pos")
        .checkpointStore(store)
        .messages(true)
        .streaming(StreamingMode.ON)
        .memoryBudget(16 * 1024)
        .spillDirectory(spill)
        .build();
  }

  /**
   * Reads the oracle slot: for every transaction with changes (and every non-transactional message,
   * a transaction of its own) the LSNs of its change messages, and the end LSN of the transaction
   * before it (the last Commit's LSN column, which the walsender sets to the commit record's end),
   * or {@code start} before the first Commit.
   */
  private static void oracle(
      EmbeddedPostgresServer pg, List<List<OracleMessage>> transactions, List<PgLsn> previousOf)
      throws Exception {
    PgLsn lastEnd = null; // a source with a new store starts at the slot's position, unknown
    List<OracleMessage> open = null;
    try (Connection c = pg.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT lsn, get_byte(data, 0) FROM pg_logical_slot_peek_binary_changes("
                    + "'pos_oracle', NULL, NULL, 'proto_version', '1',"
                    + " 'publication_names', 'pos', 'messages', 'true')")) {
      while (rs.next()) {
        PgLsn lsn = PgLsn.parse(rs.getString(1));
        char type = (char) rs.getInt(2);
        switch (type) {
          case 'B' -> open = new ArrayList<>();
          case 'C' -> {
            if (!open.isEmpty()) {
              transactions.add(open);
              previousOf.add(lastEnd);
            }
            open = null;
            lastEnd = lsn;
          }
          case 'I', 'U', 'D', 'T', 'M' -> {
            if (open != null) {
              open.add(new OracleMessage(lsn, type));
            } else {
              // a non-transactional message: its own predecessor, and the next one's
              transactions.add(List.of(new OracleMessage(lsn, type)));
              previousOf.add(lsn);
              lastEnd = lsn;
            }
          }
          default -> {
            // Relation, Type, Origin: no event
          }
        }
      }
    }
  }
}
