package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.json.JsonConverter;
import org.junit.jupiter.api.Test;

/** Offsets as Connect stores them: the partition's bytes, and offsets read back. */
class OffsetsTest {

  @Test
  void thePartitionIteratesInOneOrderSoItsJsonBytesAreTheSameInEveryJvm() {
    Map<String, String> p = Offsets.partition("shop", "postgres", "shop_slot");
    assertEquals(List.of("server", "database", "slot"), new ArrayList<>(p.keySet()));
    JsonConverter json = new JsonConverter();
    json.configure(Map.of("schemas.enable", "false"), true);
    assertEquals(
        "{\"server\":\"shop\",\"database\":\"postgres\",\"slot\":\"shop_slot\"}",
        new String(json.fromConnectData("t", null, p)));
  }

  @Test
  void anOffsetInsideATransactionReadsBackAsThatPartialTransaction() {
    ClusterIdentity cluster = new ClusterIdentity(7714603235741071569L, 2, "postgres");
    Map<String, Object> offset =
        Offsets.offset(PgLsn.of(0x1000), PgLsn.of(0x2000), 5, 3, cluster, "pub", null);
    // as Connect's JSON brings it back: small numbers as Integer
    Map<String, Object> json = new HashMap<>(offset);
    json.put("lsn", 4096);
    CdcCheckpoint c = Offsets.checkpoint("s", json, "test");
    assertEquals(PgLsn.of(0x1000), c.watermark());
    assertTrue(c.isAcknowledged(PgLsn.of(0x2000), 2));
    assertTrue(!c.isAcknowledged(PgLsn.of(0x2000), 3));
    assertEquals(cluster, c.cluster());
    assertEquals("pub", c.publication());
    assertEquals(SnapshotProgress.NONE, c.snapshot());
  }

  @Test
  void snapshotProgressRoundTrips() {
    SnapshotProgress progress =
        new SnapshotProgress(
            false,
            PgLsn.of(0x3000),
            List.of(SnapshotProgress.TableSnapshot.whole("initial", new TableId("public", "t"))));
    Map<String, Object> offset =
        Offsets.offset(PgLsn.ZERO, null, 0, 0, null, "pub", Offsets.encodeSnapshot("s", progress));
    assertEquals(progress, Offsets.checkpoint("s", offset, "test").snapshot());
  }

  @Test
  void aBadOffsetNamesTheFieldAndThePartition() {
    ConnectException e =
        assertThrows(
            ConnectException.class,
            () -> Offsets.checkpoint("s", Map.of("lsn", "x"), "slot s (partition p)"));
    assertTrue(e.getMessage().contains("lsn = x"), e.getMessage());
    assertTrue(e.getMessage().contains("slot s (partition p)"), e.getMessage());
    ConnectException missing =
        assertThrows(
            ConnectException.class, () -> Offsets.checkpoint("s", Map.of("tx_end", 5L), "p"));
    assertTrue(missing.getMessage().contains("no lsn"), missing.getMessage());
  }
}
