package io.datum.cdc.core;

import static io.datum.cdc.core.MatrixFixture.FILLER;
import static io.datum.cdc.core.MatrixFixture.WAIT;
import static io.datum.cdc.core.MatrixFixture.assertOneTransaction;
import static io.datum.cdc.core.MatrixFixture.ids;
import static io.datum.cdc.core.MatrixFixture.range;
import static io.datum.cdc.core.MatrixFixture.slotOption;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.config.OriginFilter;
import io.datum.cdc.core.config.StreamingMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The pgoutput protocol on each PostgreSQL version {@link PgVersionMatrixTest} runs these tests on:
 * the highest protocol version is negotiated and each option works from the version that has it and
 * is refused, naming the option and the server's version, before; streamed transactions (streaming
 * on, and parallel from 16); prepared transactions (two_phase, 15+); logical decoding messages;
 * replication origins and the origin filter (16+).
 */
abstract class ProtocolMatrix {

  private final EmbeddedPostgresServer pg;
  private final MatrixFixture fx;

  /**
   * @param pg the server of the version being run
   */
  ProtocolMatrix(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.fx = new MatrixFixture(pg);
  }

  @AfterEach
  void rollBackPrepared() throws Exception {
    fx.rollBackPreparedTransactions();
  }

  /**
   * Creates a table {@code (id int PRIMARY KEY, filler text)} and a publication of it, both named
   * so.
   */
  private void table(String name) throws Exception {
    pg.execute(
        "CREATE TABLE " + name + " (id int PRIMARY KEY, filler text)",
        "CREATE PUBLICATION " + name + " FOR TABLE " + name);
  }

  private static void assertRefused(PgCdcSource.Builder builder, String... fragments) {
    try (PgCdcSource source = builder.build()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      for (String fragment : fragments) {
        assertTrue(
            e.getMessage().contains(fragment),
            () -> "no \"" + fragment + "\" in: " + e.getMessage());
      }
    }
  }

  @Test
  void theHighestProtocolIsNegotiatedAndOptionsAreRefusedWhereTheServerLacksThem()
      throws Exception {
    int v = fx.version();
    int highest = v >= 16 ? 4 : v == 15 ? 3 : 2;
    table("nego");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        fx.source("nego", "nego")
            .messages(true)
            .binary(true)
            .streaming(v >= 16 ? StreamingMode.PARALLEL : StreamingMode.ON)
            .twoPhase(v >= 15)
            .origin(v >= 16 ? OriginFilter.ANY : null)
            .build()) {
      source.start(events);
      String command = fx.startReplicationCommand("nego");
      assertEquals(Integer.toString(highest), slotOption(command, "proto_version"), command);
      assertEquals(v >= 16 ? "parallel" : "on", slotOption(command, "streaming"), command);
      assertEquals(v >= 15 ? "true" : null, slotOption(command, "two_phase"), command);
      assertEquals(v >= 16 ? "any" : null, slotOption(command, "origin"), command);
      assertEquals("true", slotOption(command, "messages"), command);
      assertEquals("true", slotOption(command, "binary"), command);
      pg.execute("INSERT INTO nego VALUES (1, 'with every option the server has')");
      assertEquals(List.of(1), ids(events.take(1, WAIT)));
    }
    fx.dropSlot("nego");

    // refused before anything is created: no slot is needed
    String server = pg.queryString("SHOW server_version_num");
    if (highest < 4) {
      assertRefused(
          fx.builder("nego", "nego").protocolVersion(highest + 1),
          "protocol version " + (highest + 1) + " needs PostgreSQL " + (highest + 1 + 12),
          server);
    }
    if (v < 15) {
      assertRefused(
          fx.builder("nego", "nego").twoPhase(true), "two_phase", "PostgreSQL 15", server);
    }
    if (v < 16) {
      assertRefused(
          fx.builder("nego", "nego").streaming(StreamingMode.PARALLEL),
          "streaming parallel",
          "PostgreSQL 16",
          server);
      assertRefused(
          fx.builder("nego", "nego").origin(OriginFilter.NONE), "origin", "PostgreSQL 16", server);
      assertRefused(
          fx.builder("nego", "nego").origin(OriginFilter.ANY), "origin", "PostgreSQL 16", server);
    }
    // an explicitly older protocol is refused for what it lacks, whatever the server
    assertRefused(
        fx.builder("nego", "nego").protocolVersion(1).streaming(StreamingMode.ON),
        "streaming on needs protocol version 2");
  }

  @ParameterizedTest
  @EnumSource(
      value = StreamingMode.class,
      names = {"ON", "PARALLEL"})
  void streamedTransactionsAreDeliveredOnceAtTheirCommitAndAbortedOnesNever(StreamingMode mode)
      throws Exception {
    assumeTrue(
        mode == StreamingMode.ON || fx.version() >= 16, "streaming parallel needs PostgreSQL 16");
    String t = "stream_" + mode.name().toLowerCase();
    table(t);
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source(t, t).streaming(mode).build()) {
      source.start(events);
      // kept open until PostgreSQL streamed it: PostgreSQL 18 does not stream a transaction it
      // finds aborted already (reorderbuffer.c, ReorderBufferCheckAndTruncateAbortedTXN), so
      // only this way is a Stream Abort of a whole transaction sent on every version
      try (Connection open = pg.getConnection()) {
        open.setAutoCommit(false);
        try (Statement st = open.createStatement()) {
          st.execute(
              "INSERT INTO " + t + " SELECT g, " + FILLER + " FROM generate_series(1, 3000) g");
        }
        await().atMost(WAIT).until(() -> fx.streamedTransactions(t) >= 1);
        open.rollback();
      }
      pg.execute(
          "BEGIN; INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(1, 2000) g; COMMIT",
          "BEGIN;"
              + " INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(10001, 11000) g;"
              + " SAVEPOINT a;"
              + " INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(20001, 21000) g;"
              + " ROLLBACK TO SAVEPOINT a;"
              + " INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(30001, 30500) g;"
              + " COMMIT",
          // rolled back at once: streamed or not, depending on the version and timing
          "BEGIN; INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(40001, 43000) g; ROLLBACK",
          "INSERT INTO " + t + " VALUES (99999, 'marker')");
      List<ChangeEvent> large = events.take(2000, WAIT);
      assertOneTransaction(large, 2000);
      assertEquals(range(1, 2000), ids(large));
      List<ChangeEvent> savepoint = events.take(1500, WAIT);
      assertOneTransaction(savepoint, 1500);
      List<Object> expected = new ArrayList<>(range(10001, 11000));
      expected.addAll(range(30001, 30500));
      assertEquals(expected, ids(savepoint), "only the rolled back savepoint's rows are missing");
      assertEquals(
          List.of(99999), ids(events.take(1, WAIT)), "nothing of the aborted ones, nothing twice");
      // the aborted, the committed and the one with a savepoint were streamed
      await().atMost(WAIT).until(() -> fx.streamedTransactions(t) >= 3);
    }
    fx.dropSlot(t);
  }

  @Test
  void preparedTransactionsAreDeliveredAtCommitPreparedAndNeverAfterRollbackPrepared()
      throws Exception {
    assumeTrue(fx.version() >= 15, "two_phase needs PostgreSQL 15");
    table("twophase");
    EventCollector events = new EventCollector(true);
    PgCdcSource.Builder builder =
        fx.source("twophase", "twophase").twoPhase(true).streaming(StreamingMode.ON);
    // prepared after the slot was created, before two_phase was asked for: PostgreSQL sends it
    // whole (Begin Prepare .. Prepare, then Commit Prepared) once it commits
    pg.execute("BEGIN; INSERT INTO twophase VALUES (20, 'early'); PREPARE TRANSACTION 'mx_early'");
    try (PgCdcSource source = builder.build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO twophase VALUES (1, 'a'), (2, 'b'); PREPARE TRANSACTION 'mx_commit'",
          "BEGIN; INSERT INTO twophase VALUES (3, 'c'); PREPARE TRANSACTION 'mx_rollback'",
          // large: streamed, then Stream Prepare
          "BEGIN; INSERT INTO twophase SELECT g, "
              + FILLER
              + " FROM generate_series(1000, 2499) g;"
              + " PREPARE TRANSACTION 'mx_large_rollback'",
          "BEGIN; INSERT INTO twophase SELECT g, "
              + FILLER
              + " FROM generate_series(5000, 6499) g;"
              + " PREPARE TRANSACTION 'mx_large_commit'",
          "INSERT INTO twophase VALUES (10, 'between')");
      assertEquals(
          List.of(10),
          ids(events.take(1, WAIT)),
          "nothing prepared is delivered before its commit");
      pg.execute(
          "ROLLBACK PREPARED 'mx_rollback'",
          "ROLLBACK PREPARED 'mx_large_rollback'",
          "COMMIT PREPARED 'mx_commit'",
          "COMMIT PREPARED 'mx_large_commit'",
          "INSERT INTO twophase VALUES (11, 'marker')");
      List<ChangeEvent> small = events.take(2, WAIT);
      assertOneTransaction(small, 2);
      assertEquals(List.of(1, 2), ids(small));
      List<ChangeEvent> large = events.take(1500, WAIT);
      assertOneTransaction(large, 1500);
      assertEquals(range(5000, 6499), ids(large));
      assertEquals(List.of(11), ids(events.take(1, WAIT)), "nothing of the rolled back ones");
      pg.execute("COMMIT PREPARED 'mx_early'", "INSERT INTO twophase VALUES (12, 'marker')");
      List<ChangeEvent> early = events.take(1, WAIT);
      assertOneTransaction(early, 1);
      assertEquals(List.of(20), ids(early));
      assertEquals(List.of(12), ids(events.take(1, WAIT)));
      await().atMost(WAIT).until(() -> source.metrics().pendingTransactions() == 0);
    }
    fx.dropSlot("twophase");
  }

  @Test
  void logicalDecodingMessagesTransactionalAndNot() throws Exception {
    table("msgs");
    fx.createSlot("msgs_off");
    EventCollector events = new EventCollector(true);
    EventCollector without = new EventCollector(true);
    try (PgCdcSource source = fx.source("msgs", "msgs").messages(true).build();
        PgCdcSource off = fx.source("msgs_off", "msgs").build()) {
      source.start(events);
      off.start(without);
      pg.execute(
          "SELECT pg_logical_emit_message(false, 'mx.plain', 'outside')",
          "BEGIN; INSERT INTO msgs VALUES (1, 'a');"
              + " SELECT pg_logical_emit_message(true, 'mx.tx', '\\x00ff'::bytea); COMMIT",
          // a non-transactional message is sent even when its transaction rolls back
          "BEGIN; SELECT pg_logical_emit_message(true, 'mx.tx', 'rolled back');"
              + " SELECT pg_logical_emit_message(false, 'mx.plain', 'kept'); ROLLBACK",
          "BEGIN; SELECT pg_logical_emit_message(true, 'mx.alone', 'only a message'); COMMIT",
          "INSERT INTO msgs VALUES (2, 'marker')");
      List<ChangeEvent> got = events.take(6, WAIT);

      MessageEvent outside = assertMessage(got.get(0), "mx.plain", "outside", false);
      assertEquals(1, outside.offset().eventCount());
      assertInstanceOf(InsertEvent.class, got.get(1));
      MessageEvent inTx = assertMessage(got.get(2), "mx.tx", null, true);
      assertArrayEquals(new byte[] {0, (byte) 0xff}, inTx.content());
      assertOneTransaction(got.subList(1, 3), 2);
      assertMessage(got.get(3), "mx.plain", "kept", false);
      MessageEvent alone = assertMessage(got.get(4), "mx.alone", "only a message", true);
      assertOneTransaction(List.of(alone), 1);
      assertEquals(List.of(2), ids(got.subList(5, 6)));
      for (int i = 1; i < got.size(); i++) {
        assertTrue(
            got.get(i).offset().txEndLsn().isAfter(got.get(i - 1).offset().txEndLsn())
                || got.get(i).offset().txEndLsn().equals(got.get(i - 1).offset().txEndLsn()),
            "in WAL order");
      }

      assertEquals(List.of(1, 2), ids(without.take(2, WAIT)), "without messages(true), rows only");
      assertEquals(List.of(), without.drain());
    }
    fx.dropSlot("msgs");
    fx.dropSlot("msgs_off");
  }

  /**
   * A transactional message emitted in a savepoint that is rolled back is dropped with it, unless
   * the transaction is streamed: pgoutput then tags the message with the top-level xid, not the
   * subtransaction's (pgoutput.c, pgoutput_message: {@code xid = txn->xid}), so the Stream Abort of
   * the subtransaction does not cover it and it is delivered. A PostgreSQL limitation that
   * datum-cdc cannot see past; if a version changes it, this test says so.
   */
  @ParameterizedTest
  @EnumSource(
      value = StreamingMode.class,
      names = {"OFF", "ON"})
  void aMessageOfARolledBackSavepointIsDeliveredOnlyWhenItsTransactionIsStreamed(StreamingMode mode)
      throws Exception {
    String t = "msgsave_" + mode.name().toLowerCase();
    table(t);
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source(t, t).messages(true).streaming(mode).build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(1, 1500) g;"
              + " SELECT pg_logical_emit_message(true, 'mx.big', 'kept');"
              + " SAVEPOINT s; SELECT pg_logical_emit_message(true, 'mx.big', 'rolled back');"
              + " INSERT INTO "
              + t
              + " SELECT g, "
              + FILLER
              + " FROM generate_series(5000, 6499) g;"
              + " ROLLBACK TO SAVEPOINT s; COMMIT",
          "INSERT INTO " + t + " VALUES (99999, 'marker')");
      boolean streamed = mode == StreamingMode.ON;
      List<ChangeEvent> got = events.take(streamed ? 1502 : 1501, WAIT);
      assertOneTransaction(got, got.size());
      assertEquals(
          range(1, 1500), ids(got.subList(0, 1500)), "the savepoint's rows are dropped either way");
      assertMessage(got.get(1500), "mx.big", "kept", true);
      if (streamed) {
        assertMessage(got.get(1501), "mx.big", "rolled back", true);
      }
      assertEquals(List.of(99999), ids(events.take(1, WAIT)));
    }
    fx.dropSlot(t);
  }

  private static MessageEvent assertMessage(
      ChangeEvent event, String prefix, String content, boolean transactional) {
    MessageEvent m = assertInstanceOf(MessageEvent.class, event);
    assertEquals(prefix, m.prefix());
    if (content != null) {
      assertEquals(content, new String(m.content(), StandardCharsets.UTF_8));
    }
    assertEquals(transactional, m.transactional());
    return m;
  }

  @Test
  void replicationOriginsAreReportedAndFilteredOutWithOriginNone() throws Exception {
    boolean filter = fx.version() >= 16;
    table("origins");
    pg.execute("SELECT pg_replication_origin_create('mx_origin')");
    fx.createSlot("origins_any");
    if (filter) {
      fx.createSlot("origins_none");
    }
    EventCollector any = new EventCollector(true);
    EventCollector none = new EventCollector(true);
    try (PgCdcSource all =
            fx.source("origins_any", "origins")
                .streaming(StreamingMode.ON)
                .origin(filter ? OriginFilter.ANY : null)
                .build();
        PgCdcSource local =
            filter
                ? fx.source("origins_none", "origins")
                    .streaming(StreamingMode.ON)
                    .origin(OriginFilter.NONE)
                    .build()
                : null) {
      all.start(any);
      if (local != null) {
        local.start(none);
        assertEquals("none", slotOption(fx.startReplicationCommand("origins_none"), "origin"));
      }
      pg.execute(
          "SELECT pg_replication_origin_session_setup('mx_origin')",
          "INSERT INTO origins VALUES (1, 'replayed')",
          // large: streamed, the Origin message then comes in the first stream block
          "BEGIN; INSERT INTO origins SELECT g, "
              + FILLER
              + " FROM generate_series(100, 1599) g; COMMIT",
          "SELECT pg_replication_origin_session_reset()",
          "INSERT INTO origins VALUES (2, 'local')");
      List<ChangeEvent> got = any.take(1502, WAIT);
      assertEquals(1, ids(got.subList(0, 1)).get(0));
      assertEquals("mx_origin", got.get(0).transaction().origin());
      assertOneTransaction(got.subList(1, 1501), 1500);
      assertEquals(range(100, 1599), ids(got.subList(1, 1501)));
      assertEquals(
          "mx_origin", got.get(1).transaction().origin(), "origin of a streamed transaction");
      assertEquals(List.of(2), ids(got.subList(1501, 1502)));
      assertNull(got.get(1501).transaction().origin());
      await().atMost(WAIT).until(() -> fx.streamedTransactions("origins_any") >= 1);
      if (local != null) {
        List<ChangeEvent> filtered = none.take(1, WAIT);
        assertEquals(List.of(2), ids(filtered), "origin none: only the local transaction");
        assertNull(filtered.get(0).transaction().origin());
        assertEquals(List.of(), none.drain());
      }
    }
    fx.dropSlot("origins_any");
    if (filter) {
      fx.dropSlot("origins_none");
    }
  }
}
