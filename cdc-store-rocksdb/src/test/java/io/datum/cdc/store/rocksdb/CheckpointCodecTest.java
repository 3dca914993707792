package io.datum.cdc.store.rocksdb;

import static io.datum.cdc.store.rocksdb.Checkpoints.checkpoint;
import static io.datum.cdc.store.rocksdb.Checkpoints.tx;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CheckpointCodecTest {

  @Test
  void encodingIsCompact() {
    assertEquals(
        18 + 1, CheckpointCodec.encode(CdcCheckpoint.atWatermark("s", PgLsn.of(1))).length);
    assertEquals(
        18 + 63,
        CheckpointCodec.encode(CdcCheckpoint.atWatermark("x".repeat(63), PgLsn.of(1))).length);
    // one transaction, acknowledged {0, 2, 3}: two ranges
    assertEquals(
        18 + 1 + 16 + 2 * 8,
        CheckpointCodec.encode(checkpoint("s", "0/10", tx("0/20", 5, 0, 2, 3))).length);
    // a million contiguous acknowledged events are one range
    BitSet run = new BitSet();
    run.set(0, 1_000_000);
    CdcCheckpoint big =
        new CdcCheckpoint(
            "s", PgLsn.of(1), List.of(new PartialTransaction(PgLsn.of(2), 2_000_000, run)));
    assertEquals(18 + 1 + 16 + 8, CheckpointCodec.encode(big).length);
  }

  @Test
  void randomCheckpointsRoundTrip() {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    for (int i = 0; i < 2000; i++) {
      CdcCheckpoint original = randomCheckpoint(random);
      byte[] encoded = CheckpointCodec.encode(original);
      assertEquals(
          original, CheckpointCodec.decode(encoded, original.slot(), "/db"), "seed " + seed);
    }
  }

  private static CdcCheckpoint randomCheckpoint(Random random) {
    StringBuilder slot = new StringBuilder();
    String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_";
    for (int n = 1 + random.nextInt(63); n > 0; n--) {
      slot.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    long watermark =
        random.nextBoolean() ? random.nextLong() & Long.MAX_VALUE : random.nextInt(1000);
    List<PartialTransaction> txs = new ArrayList<>();
    long end = watermark;
    for (int t = random.nextInt(5); t > 0 && Long.compareUnsigned(end, -3L) < 0; t--) {
      end += 1 + random.nextInt(1000);
      if (random.nextInt(10) == 0) {
        end = -1L; // FFFFFFFF/FFFFFFFF, the largest LSN
      }
      int count = 1 + random.nextInt(random.nextBoolean() ? 10 : 5000);
      BitSet acknowledged = new BitSet();
      for (int k = random.nextInt(count + 1); k > 0; k--) {
        acknowledged.set(random.nextInt(count));
      }
      txs.add(new PartialTransaction(PgLsn.of(end), count, acknowledged));
      if (end == -1L) {
        break;
      }
    }
    return new CdcCheckpoint(slot.toString(), PgLsn.of(watermark), txs);
  }
}
