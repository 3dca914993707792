package io.datum.cdc.cli;

import static io.datum.cdc.cli.PgcdcProcess.pgcdc;
import static io.datum.cdc.cli.PgcdcProcess.streamArgs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.cli.PgcdcProcess.Run;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pgcdc} pointed at a hot standby (PostgreSQL 16+, here the default version) as child
 * processes: {@code stream --primary-url} creates the publication on the primary and the slot on
 * the standby and prints the initial snapshot; without {@code --primary-url} a snapshot is refused
 * naming the flag; {@code status} shows the standby's fields; {@code snapshot} writes its request
 * on the primary and checks the slot on the standby.
 */
@EmbeddedPostgresTest
class StandbyCommandsTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final EmbeddedPostgresServer primary;

  StandbyCommandsTest(EmbeddedPostgresServer primary) {
    this.primary = primary;
  }

  /** Runs {@code pgcdc snapshot} of sc_items for slot sc_slot, with a primary URL or none. */
  private static Run requestSnapshot(Path dir, String url, String primaryUrl) throws Exception {
    List<String> args = new ArrayList<>(List.of("snapshot", "--url", url));
    if (primaryUrl != null) {
      args.addAll(List.of("--primary-url", primaryUrl));
    }
    args.addAll(List.of("--slot", "sc_slot", "--table", "sc_items"));
    return pgcdc(dir, args.toArray(new String[0]));
  }

  private static String[] with(String[] args, String... more) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of(more));
    return all.toArray(new String[0]);
  }

  @Test
  void streamStatusAndSnapshotAgainstAStandby(@TempDir Path dir) throws Exception {
    primary.execute(
        "CREATE TABLE sc_items (id int PRIMARY KEY, name text)",
        "INSERT INTO sc_items SELECT g, 'n' || g FROM generate_series(1, 25) g");
    try (EmbeddedPostgresServer standby = primary.createStandby("sc_standby")) {
      Path store = dir.resolve("store");
      String[] base = streamArgs(standby.jdbcUrl(), primary.user(), store, "sc_slot", "sc_pub");

      Run refused =
          pgcdc(
              dir,
              with(base, "--create-publication", "--tables", "sc_items", "--snapshot", "initial"));
      assertNotEquals(0, refused.exitCode(), refused.stderr());
      assertTrue(refused.stderr().contains("--primary-url"), refused.stderr());
      assertTrue(refused.stderr().contains("hot standby"), refused.stderr());

      Run run =
          pgcdc(
              dir,
              with(
                  base,
                  "--primary-url",
                  primary.jdbcUrl(),
                  "--create-publication",
                  "--tables",
                  "sc_items",
                  "--create-slot",
                  "--snapshot",
                  "initial-only"));
      assertEquals(0, run.exitCode(), run.stderr());
      TreeSet<Integer> ids = new TreeSet<>();
      for (String line : run.stdout()) {
        JsonNode n = JSON.readTree(line);
        assertEquals("read", n.get("op").asText(), line);
        ids.add(n.get("after").get("id").asInt());
      }
      assertEquals(25, ids.size(), run.stdout().toString());
      assertEquals(1, ids.first());
      assertEquals(25, ids.last());
      assertEquals(
          "1", primary.queryString("SELECT count(*) FROM pg_publication WHERE pubname = 'sc_pub'"));

      Run status = pgcdc(dir, "status", "--url", standby.jdbcUrl(), "--slot", "sc_slot");
      assertEquals(0, status.exitCode(), status.stderr());
      JsonNode s = JSON.readTree(String.join("\n", status.stdout()));
      assertTrue(s.get("standby").asBoolean(), s.toString());
      assertTrue(s.get("invalidation_reason").isNull(), s.toString());
      assertTrue(s.get("standby_replay_lag_bytes").isIntegralNumber(), s.toString());

      Run alone = requestSnapshot(dir, standby.jdbcUrl(), null);
      assertNotEquals(0, alone.exitCode(), alone.stderr());
      assertTrue(alone.stderr().contains("hot standby"), alone.stderr());
      assertTrue(alone.stderr().contains("--primary-url"), alone.stderr());
      Run request = requestSnapshot(dir, standby.jdbcUrl(), primary.jdbcUrl());
      assertEquals(0, request.exitCode(), request.stderr());
      assertTrue(
          request.stdout().get(0).startsWith("requested a snapshot of [public.sc_items]"),
          request.stdout().toString());

      // a primary URL of another database would lose the request without a word: refused
      primary.createDatabase("sc_other");
      Run otherDatabase = requestSnapshot(dir, standby.jdbcUrl(), primary.jdbcUrl("sc_other"));
      assertNotEquals(0, otherDatabase.exitCode(), otherDatabase.stderr());
      assertTrue(otherDatabase.stderr().contains("database sc_other"), otherDatabase.stderr());
      // --url a primary: the request is written there, --primary-url unused, and it says so
      Run onPrimary = requestSnapshot(dir, primary.jdbcUrl(), standby.jdbcUrl());
      assertNotEquals(0, onPrimary.exitCode(), "the slot is on the standby: " + onPrimary.stderr());
      assertTrue(onPrimary.stderr().contains("--primary-url is not used"), onPrimary.stderr());
    }
  }
}
