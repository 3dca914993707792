package io.datum.cdc.embedded;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A physical standby of a running server: it replays what the primary commits, is read-only, and
 * after {@code promote()} accepts writes on timeline 2. PostgreSQL's own views are the oracle
 * ({@code pg_stat_replication}, {@code pg_is_in_recovery()}, {@code pg_control_checkpoint()}).
 */
@Tag("postgres")
class StandbyTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  @ParameterizedTest(name = "PostgreSQL {0}")
  @ValueSource(ints = {14, 17})
  void aStandbyReplaysAndIsPromoted(int version) throws Exception {
    try (EmbeddedPostgresServer primary =
            EmbeddedPostgresServer.builder().majorVersion(version).start();
        EmbeddedPostgresServer standby = createStandby(primary)) {
      assertEquals("t", standby.queryString("SELECT pg_is_in_recovery()"));
      assertEquals(
          "streaming",
          primary.queryString(
              "SELECT state FROM pg_stat_replication WHERE application_name = 'standby1'"));
      assertEquals(
          "standby1",
          primary.queryString(
              "SELECT slot_name FROM pg_replication_slots WHERE slot_type = 'physical' AND active"));
      if (version >= 17) {
        assertEquals("standby1", primary.queryString("SHOW synchronized_standby_slots"));
        assertEquals("", standby.queryString("SHOW synchronized_standby_slots"));
        assertEquals("on", standby.queryString("SHOW sync_replication_slots"));
      }
      primary.execute("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)");
      String written = primary.queryString("SELECT pg_current_wal_lsn()");
      await()
          .atMost(WAIT)
          .until(
              () ->
                  "t"
                      .equals(
                          standby.queryString(
                              "SELECT pg_last_wal_replay_lsn() >= '" + written + "'::pg_lsn")));
      assertEquals("2", standby.queryString("SELECT count(*) FROM t"));
      assertThrows(SQLException.class, () -> standby.execute("INSERT INTO t VALUES (3)"));

      primary.stop();
      standby.promote();
      assertEquals("f", standby.queryString("SELECT pg_is_in_recovery()"));
      standby.execute("INSERT INTO t VALUES (3)");
      assertEquals("3", standby.queryString("SELECT count(*) FROM t"));
      standby.execute("CHECKPOINT"); // the control file names the new timeline from then on
      assertEquals("2", standby.queryString("SELECT timeline_id FROM pg_control_checkpoint()"));
      assertThrows(SQLException.class, standby::promote, "not a standby any more");
      if (version >= 17) {
        // the promoted server waits for no standby until one is made of it
        assertEquals("", standby.queryString("SHOW synchronized_standby_slots"));
        try (EmbeddedPostgresServer second = standby.createStandby("standby2")) {
          assertEquals("standby2", standby.queryString("SHOW synchronized_standby_slots"));
          assertEquals("t", second.queryString("SELECT pg_is_in_recovery()"));
          assertEquals("3", second.queryString("SELECT count(*) FROM t"));
        }
        // closing a standby leaves its primary as it was
        assertEquals("", standby.queryString("SHOW synchronized_standby_slots"));
        assertEquals(
            "0",
            standby.queryString(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'standby2'"));
      }
    }
  }

  private static EmbeddedPostgresServer createStandby(EmbeddedPostgresServer primary) {
    try {
      return primary.createStandby("standby1");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
