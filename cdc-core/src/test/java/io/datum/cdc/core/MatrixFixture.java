package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.UpdateEvent;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the version-matrix tests ({@code PgVersion*Test}) share: slots created before the writes
 * they must see, sources on them, the walsender's START_REPLICATION command, and assertions on
 * transactions. One per test instance, on the invocation's server.
 */
final class MatrixFixture {

  /** The longest wait for an expected event; only a failing test waits this long. */
  static final Duration WAIT = Duration.ofSeconds(30);

  /** About 200 bytes per row, so that a few hundred rows exceed logical_decoding_work_mem=64kB. */
  static final String FILLER = "repeat('x', 200)";

  private final EmbeddedPostgresServer pg;

  MatrixFixture(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /** Returns the server's major version, 14 to 18. */
  int version() {
    return pg.majorVersion();
  }

  /**
   * Creates a pgoutput slot now, if it does not exist: it sees every transaction that commits after
   * this returns (creating a slot waits for the transactions in progress, prepared ones too).
   */
  void createSlot(String slot) throws SQLException {
    if ("0"
        .equals(
            pg.queryString(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'"))) {
      pg.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    }
  }

  /**
   * Creates the slot (see {@link #createSlot}) and returns a builder for it, with a memory store.
   */
  PgCdcSource.Builder source(String slot, String publication) throws SQLException {
    return source(slot, publication, new MemoryCheckpointStore());
  }

  /** Creates the slot (see {@link #createSlot}) and returns a builder for it and the store. */
  PgCdcSource.Builder source(String slot, String publication, CdcCheckpointStore store)
      throws SQLException {
    createSlot(slot);
    return builder(slot, publication).checkpointStore(store);
  }

  /** Returns a builder for a slot and publication, with a memory store; creates nothing. */
  PgCdcSource.Builder builder(String slot, String publication) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication(publication)
        .checkpointStore(new MemoryCheckpointStore())
        .stopTimeout(Duration.ofSeconds(10));
  }

  /** Waits until no walsender holds the slot, then drops it. */
  void dropSlot(String slot) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                "f"
                    .equals(
                        pg.queryString(
                            "SELECT active FROM pg_replication_slots WHERE slot_name = '"
                                + slot
                                + "'")));
    try {
      pg.execute("SELECT pg_drop_replication_slot('" + slot + "')");
    } catch (SQLException e) {
      throw new AssertionError("cannot drop slot " + slot, e);
    }
  }

  /** Rolls back every prepared transaction: one left prepared blocks the creation of slots. */
  void rollBackPreparedTransactions() throws SQLException {
    List<String> gids = new ArrayList<>();
    try (var c = pg.getConnection();
        var st = c.createStatement();
        var rs = st.executeQuery("SELECT gid FROM pg_prepared_xacts")) {
      while (rs.next()) {
        gids.add(rs.getString(1));
      }
    }
    for (String gid : gids) {
      pg.execute("ROLLBACK PREPARED '" + gid + "'");
    }
  }

  /**
   * Returns the START_REPLICATION command of the source streaming from a slot, as its walsender
   * reports it in pg_stat_activity (the walsender reports each replication command it runs).
   */
  String startReplicationCommand(String slot) {
    String sql =
        "SELECT query FROM pg_stat_activity WHERE backend_type = 'walsender'"
            + " AND application_name = 'datum-cdc "
            + slot
            + "' AND query LIKE 'START_REPLICATION%'";
    await()
        .atMost(WAIT)
        .until(
            () -> {
              try {
                return pg.queryString(sql) != null;
              } catch (SQLException e) {
                return false; // no row yet
              }
            });
    try {
      return pg.queryString(sql);
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /** Returns the pgoutput option's value in a START_REPLICATION command, or null if not sent. */
  static String slotOption(String command, String option) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(option) + "\" '([^']*)'").matcher(command);
    return m.find() ? m.group(1) : null;
  }

  /** Returns how many transactions PostgreSQL streamed on a slot so far. */
  long streamedTransactions(String slot) throws SQLException {
    return Long.parseLong(
        pg.queryString(
            "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots WHERE slot_name = '"
                + slot
                + "'"));
  }

  /** Returns the {@code id} column of each row change (from {@code after}, else {@code before}). */
  static List<Object> ids(List<ChangeEvent> events) {
    List<Object> ids = new ArrayList<>();
    for (ChangeEvent e : events) {
      ids.add(row(e).get("id"));
    }
    return ids;
  }

  /** Returns an insert's or update's new row, or a delete's old row. */
  static Row row(ChangeEvent e) {
    if (e instanceof InsertEvent i) {
      return i.after();
    }
    if (e instanceof UpdateEvent u) {
      return u.after();
    }
    if (e instanceof DeleteEvent d) {
      return d.before();
    }
    throw new AssertionError("not a row change: " + e);
  }

  /** Returns the integers from {@code from} to {@code to}, both included. */
  static List<Object> range(int from, int to) {
    List<Object> ids = new ArrayList<>(to - from + 1);
    for (int i = from; i <= to; i++) {
      ids.add(i);
    }
    return ids;
  }

  /** Asserts the events are exactly one transaction of {@code n} events, indexes 0 to n-1. */
  static void assertOneTransaction(List<ChangeEvent> events, int n) {
    assertEquals(n, events.size());
    PgLsn end = events.get(0).offset().txEndLsn();
    long xid = events.get(0).offset().xid();
    for (int i = 0; i < n; i++) {
      ChangeEvent e = events.get(i);
      assertEquals(i, e.offset().eventIndex());
      assertEquals(n, e.offset().eventCount());
      assertEquals(n, e.transaction().eventCount());
      assertEquals(end, e.offset().txEndLsn());
      assertEquals(xid, e.offset().xid());
    }
    assertTrue(events.get(0).offset().commitLsn().isBefore(end));
  }

  /**
   * Returns a map of name, value pairs in order, to compare with {@link
   * io.datum.cdc.event.Row#toMap()}.
   */
  static Map<String, Object> cols(Object... namesAndValues) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      m.put((String) namesAndValues[i], namesAndValues[i + 1]);
    }
    return m;
  }
}
