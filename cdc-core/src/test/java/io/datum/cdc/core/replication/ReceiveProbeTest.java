package io.datum.cdc.core.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.replication.PGReplicationStream;

/** {@link ReceiveProbe} on a real replication connection to PostgreSQL 17. */
@EmbeddedPostgresTest
class ReceiveProbeTest {

  private final EmbeddedPostgresServer pg;

  ReceiveProbeTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void saysNothingToReadExactlyWhileNoByteOfTheStreamWaits() throws Exception {
    pg.execute(
        "CREATE TABLE probe_t (id int PRIMARY KEY)",
        "CREATE PUBLICATION probe_pub FOR TABLE probe_t",
        "SELECT pg_create_logical_replication_slot('probe_slot', 'pgoutput')");
    try (Connection c = pg.getReplicationConnection("postgres")) {
      PGReplicationStream stream =
          c.unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName("probe_slot")
              .withSlotOption("proto_version", "1")
              .withSlotOption("publication_names", "probe_pub")
              .withStatusInterval(1, TimeUnit.HOURS)
              .start();
      ReceiveProbe probe = ReceiveProbe.of(c);
      assertNotNull(probe, "a plain TCP connection of this pgjdbc has a probe");
      // whatever came at the start (a keepalive) is read; then the socket is empty
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> stream.readPending() == null && probe.nothingToRead());

      pg.execute("INSERT INTO probe_t VALUES (1)");
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !probe.nothingToRead());
      // the probe saw the transaction's bytes: reads return its messages without waiting for more
      List<Character> kinds = new ArrayList<>();
      while (kinds.isEmpty() || kinds.get(kinds.size() - 1) != 'C') {
        ByteBuffer message = stream.readPending();
        if (message != null) {
          kinds.add((char) message.get(message.position()));
        }
      }
      assertEquals(List.of('B', 'R', 'I', 'C'), kinds, "BEGIN, RELATION, INSERT, COMMIT");
      // read up to the end (a keepalive may follow the commit); the probe says empty again
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> stream.readPending() == null && probe.nothingToRead());
      stream.close();
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('probe_slot')", "DROP PUBLICATION probe_pub");
    }
  }

  @Test
  void aConnectionThatIsNotPgjdbcsHasNoProbeAndIsLeftAlone() {
    List<String> called = new ArrayList<>();
    Connection other =
        (Connection)
            Proxy.newProxyInstance(
                Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                  called.add(method.getName());
                  throw new SQLException("not a wrapper for " + args[0]);
                });
    assertNull(ReceiveProbe.of(other));
    assertEquals(List.of("unwrap"), called, "asked to unwrap, nothing else");
  }

  @Test
  void anOpenConnectionWithoutAStreamHasAProbeThatSeesNothing() throws Exception {
    try (Connection c = pg.getReplicationConnection("postgres")) {
      ReceiveProbe probe = ReceiveProbe.of(c);
      assertNotNull(probe);
      assertTrue(probe.nothingToRead(), "the server sends nothing unasked");
    }
  }
}
