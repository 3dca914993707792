package io.datum.cdc.testkit;

import static io.datum.cdc.testkit.KitFixtures.assertLoads;
import static io.datum.cdc.testkit.KitFixtures.at;
import static io.datum.cdc.testkit.KitFixtures.tx;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The {@code Lifecycle} group of {@link CheckpointStoreConformanceKit}; see its Javadoc there. */
abstract class LifecycleChecks {

  private final CheckpointStoreConformanceKit kit;

  LifecycleChecks(CheckpointStoreConformanceKit kit) {
    this.kit = kit;
  }

  @Test
  void storeAfterCloseThrowsIllegalStateException() {
    CdcCheckpointStore store = kit.openStore();
    store.store(at("s", "0/10"));
    store.close();
    assertThrows(IllegalStateException.class, () -> store.store(at("s", "0/20")));
    assertThrows(IllegalStateException.class, () -> store.store(at("other", "0/20")));
  }

  @Test
  void storeAfterCloseChangesNothing() {
    kit.assumeOutlivesClose();
    CdcCheckpointStore store = kit.openStore();
    store.store(at("s", "0/10"));
    store.close();
    assertThrows(IllegalStateException.class, () -> store.store(at("s", "0/20")));
    assertThrows(IllegalStateException.class, () -> store.store(at("other", "0/20")));
    CdcCheckpointStore reopened = kit.openStore();
    assertLoads(reopened, at("s", "0/10"));
    assertEquals(Optional.empty(), reopened.load("other"));
  }

  @Test
  void closeIsIdempotent() {
    CdcCheckpointStore unused = kit.openStore();
    assertDoesNotThrow(unused::close);
    assertDoesNotThrow(unused::close);
    CdcCheckpointStore used = kit.openStore();
    used.store(at("s", "0/10"));
    assertDoesNotThrow(used::close);
    assertDoesNotThrow(used::close);
  }

  @Test
  void reopenAfterCloseSeesTheData() {
    kit.assumeOutlivesClose();
    CdcCheckpointStore first = kit.openStore();
    first.store(at("a", "0/10", tx("0/20", 3, 1)));
    first.store(at("b", "0/30"));
    first.store(at("b", "1/30"));
    first.close();
    CdcCheckpointStore second = kit.openStore();
    assertLoads(second, at("a", "0/10", tx("0/20", 3, 1)));
    assertLoads(second, at("b", "1/30"));
    second.store(at("a", "0/20"));
    assertEquals(List.of("a", "b"), List.copyOf(second.slots()), "slots() after reopen");
    second.close();
    assertLoads(kit.openStore(), at("a", "0/20"));
  }

  @Test
  void openingByUriSeesTheData() {
    String uri = kit.childUri();
    CdcCheckpointStore first = kit.openStore();
    first.store(at("a", "0/20", tx("0/30", 2, 1)));
    first.close();
    try (CdcCheckpointStore byUri = CheckpointStores.open(uri)) {
      assertLoads(byUri, at("a", "0/20", tx("0/30", 2, 1)));
      assertEquals(Optional.empty(), byUri.load("c"));
    }
  }

  @Test
  void secondOpenInThisJvmFailsWhileTheFirstIsOpen() {
    kit.assumeOutlivesClose();
    CdcCheckpointStore first = kit.openStore();
    first.store(at("s", "0/10"));
    CdcStoreException e = assertThrows(CdcStoreException.class, kit::openStore);
    kit.assertNamesDirectory(e);
    first.store(at("s", "0/20")); // the failed open did not disturb the first store
    assertLoads(first, at("s", "0/20"));
  }

  @Test
  void childJvmCannotOpenWhileThisOneHoldsTheStore() throws Exception {
    String uri = kit.childUri();
    CdcCheckpointStore held = kit.openStore();
    held.store(at("s", "0/10"));
    // a failed second open in this JVM must not release the hold other processes see
    assertThrows(CdcStoreException.class, kit::openStore);
    StoreChild child = kit.startChild("open", uri);
    String line = child.readLine();
    int status = child.waitForExit();
    assertTrue(
        line != null && line.startsWith("FAILED " + CdcStoreException.class.getName() + ": "),
        "a child JVM opening "
            + uri
            + " while this JVM holds it must fail with CdcStoreException, printed: "
            + line
            + child.stderr());
    if (!line.contains(held.location())) {
      KitFixtures.assertNames(kit.directory(), "the child's error", line, null);
    }
    assertEquals(1, status, "exit status of the child");
    held.store(at("s", "0/20")); // the child's failed open did not release this store's hold
    assertThrows(CdcStoreException.class, kit::openStore);
    held.close();
    StoreChild after = kit.startChild("open", uri);
    assertEquals(
        "OPENED", after.readLine(), "a child JVM opening " + uri + " after close" + after.stderr());
    assertEquals(0, after.waitForExit());
  }

  @Test
  void thisJvmCannotOpenWhileAChildHoldsTheStore() throws Exception {
    String uri = kit.childUri();
    StoreChild child = kit.startChild("write", uri, "held");
    child.readStored(1, 0); // the child has the store open and keeps storing
    CdcStoreException e =
        assertThrows(
            CdcStoreException.class, kit::openStore, "open while a child JVM holds " + uri);
    kit.assertNamesDirectory(e);
    child.kill();
    assertTrue(kit.openStore().load("held").isPresent(), "the child's checkpoints after its death");
  }
}
