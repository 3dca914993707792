package io.datum.cdc.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A password from pgjdbc's password file ({@code PGPASSFILE}, the {@code .pgpass} format): {@code
 * pgcdc stream} given no password logs in with the one the file holds for the host, port and user,
 * on its plain and its replication connections; without the file the login is refused (exit 2). The
 * server asks this one role for a password (scram-sha-256) through lines put first in its {@code
 * pg_hba.conf} for the test and removed after it.
 */
@EmbeddedPostgresTest
class PgpassTest {

  private static final String ROLE = "pgpass_role";

  private final EmbeddedPostgresServer pg;

  PgpassTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private PgcdcProcess.Run stream(Path dir, Map<String, String> env) throws Exception {
    String url = "jdbc:postgresql://localhost:" + pg.port() + "/postgres";
    List<String> args =
        new ArrayList<>(
            List.of(
                "stream",
                "--url",
                url,
                "--user",
                ROLE,
                "--slot",
                "pgpass_slot",
                "--publication",
                "pgpass_pub",
                "--store",
                "file:" + dir.resolve("store"),
                "--max-events",
                "1"));
    return PgcdcProcess.pgcdc(
        dir,
        environment -> {
          environment.remove("PGPASSFILE");
          environment.remove("PGPASSWORD");
          environment.put("HOME", dir.toString()); // no ~/.pgpass of the machine's
          environment.putAll(env);
        },
        args.toArray(String[]::new));
  }

  @Test
  void streamLogsInWithThePasswordOfThePasswordFile(@TempDir Path dir) throws Exception {
    Path hba = Path.of(pg.queryString("SHOW hba_file"));
    String original = Files.readString(hba);
    pg.execute(
        "CREATE ROLE " + ROLE + " LOGIN REPLICATION PASSWORD 'from-the-file'",
        "CREATE TABLE pgpass_t (id int PRIMARY KEY)",
        "GRANT SELECT ON pgpass_t TO " + ROLE,
        "CREATE PUBLICATION pgpass_pub FOR TABLE pgpass_t",
        "SELECT pg_create_logical_replication_slot('pgpass_slot', 'pgoutput')");
    try {
      StringBuilder lines = new StringBuilder();
      for (String database : List.of("all", "replication")) {
        for (String address : List.of("127.0.0.1/32", "::1/128")) {
          lines.append("host ").append(database).append(' ').append(ROLE).append(' ');
          lines.append(address).append(" scram-sha-256\n");
        }
      }
      Files.writeString(hba, lines + original);
      pg.execute("SELECT pg_reload_conf()");
      pg.execute("INSERT INTO pgpass_t VALUES (1)");

      PgcdcProcess.Run refused = stream(dir, Map.of());
      assertEquals(2, refused.exitCode(), refused.stderr());
      assertTrue(refused.stderr().contains("pgcdc: error: "), refused.stderr());

      Path pgpass = dir.resolve("pgpass");
      Files.writeString(pgpass, "localhost:" + pg.port() + ":*:" + ROLE + ":from-the-file\n");
      Files.setPosixFilePermissions(pgpass, PosixFilePermissions.fromString("rw-------"));
      PgcdcProcess.Run ran = stream(dir, Map.of("PGPASSFILE", pgpass.toString()));
      assertEquals(0, ran.exitCode(), ran.stderr());
      assertEquals(1, ran.stdout().size(), ran.stdout().toString());
      assertTrue(ran.stdout().get(0).contains("\"after\":{\"id\":1}"), ran.stdout().get(0));
    } finally {
      Files.writeString(hba, original);
      pg.execute(
          "SELECT pg_reload_conf()",
          "SELECT pg_drop_replication_slot('pgpass_slot')",
          "DROP PUBLICATION pgpass_pub");
    }
  }
}
