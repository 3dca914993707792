package io.datum.cdc.testkit;

import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.checkpoint;
import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.isWellFormed;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The {@code Durability} group of {@link CheckpointStoreConformanceKit}; see its Javadoc there. */
abstract class DurabilityChecks {

  private final CheckpointStoreConformanceKit kit;

  DurabilityChecks(CheckpointStoreConformanceKit kit) {
    this.kit = kit;
  }

  private static final String SLOT = "durable";

  @Test
  void everyCheckpointWhoseStoreReturnedSurvivesSigkill() throws Exception {
    String uri = kit.childUri();
    StoreChild child = kit.startChild("write", uri, SLOT);
    long last = child.readStored(200, 0);
    child.kill();
    last = child.drainStored(last);
    assertHolds(last, "after SIGKILL at " + last + " stores");
  }

  @Test
  @Timeout(value = 1, unit = TimeUnit.DAYS) // bounded below by the number of rounds
  void sigkillAtRandomMomentsNeverLeavesATornCheckpoint() throws Exception {
    String uri = kit.childUri();
    int rounds = CheckpointStoreConformanceKit.crashRounds();
    assertTimeoutPreemptively(
        Duration.ofSeconds(30 + 10L * rounds), () -> killAtRandom(uri, rounds));
  }

  private void killAtRandom(String uri, int rounds) throws Exception {
    long seed = Long.getLong("datum.cdc.testkit.seed", System.nanoTime());
    Random random = new Random(seed);
    long baseline = 0;
    for (int round = 1; round <= rounds; round++) {
      int lines = random.nextInt(301);
      StoreChild child = kit.startChild("write", uri, SLOT);
      long last = child.readStored(lines, baseline);
      child.kill();
      last = child.drainStored(last);
      String when =
          "round "
              + round
              + " (seed "
              + seed
              + ", -Ddatum.cdc.testkit.seed to repeat), SIGKILL after "
              + lines
              + " lines";
      try {
        baseline = assertHolds(last, when);
      } catch (RuntimeException e) {
        throw new AssertionError(when + ": " + e, e);
      }
    }
  }

  /** Opens the store, checks it holds checkpoint(last) or checkpoint(last + 1), closes it. */
  private long assertHolds(long last, String when) {
    CdcCheckpointStore store;
    try {
      store = kit.openStore();
    } catch (CdcStoreException e) {
      throw new AssertionError(
          when
              + ": the store cannot be reopened after its process was"
              + " killed (a lock must not outlive the process holding it): "
              + e,
          e);
    }
    try {
      Optional<CdcCheckpoint> loaded = store.load(SLOT);
      if (loaded.isEmpty()) {
        assertTrue(last == 0, when + ": store() returned for " + last + " but the slot is empty");
        return 0;
      }
      CdcCheckpoint c = loaded.get();
      assertTrue(
          isWellFormed(c),
          when
              + ": torn checkpoint "
              + c
              + ", expected "
              + checkpoint(SLOT, c.watermark().asLong()));
      long n = c.watermark().asLong();
      assertTrue(
          n >= last, when + ": store() returned for " + last + " but the store holds only " + n);
      assertTrue(
          n <= last + 1,
          when + ": the store holds " + n + ", which the child never began to store");
      return n;
    } finally {
      store.close();
    }
  }
}
