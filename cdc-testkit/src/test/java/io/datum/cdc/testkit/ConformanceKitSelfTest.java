package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedMethod;

import io.datum.cdc.testkit.CheckpointStoreConformanceKit.Concurrency;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit.Corruption;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit.Durability;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit.Lifecycle;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit.Slots;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Checks that the conformance kit catches real defects: each {@link FlawedStore.Flaw} makes the kit
 * test aimed at it fail, for the expected reason, while the same store without the flaw passes that
 * test.
 */
class ConformanceKitSelfTest {

  private static final String DURABLE = "everyCheckpointWhoseStoreReturnedSurvivesSigkill";
  private static final String CONCURRENT = "concurrentStoresAndLoadsNeverTearOrLose";
  private static final String SECOND_OPEN = "secondOpenInThisJvmFailsWhileTheFirstIsOpen";
  private static final String CHILD_OPEN = "childJvmCannotOpenWhileThisOneHoldsTheStore";
  private static final String CHILD_HOLDS = "thisJvmCannotOpenWhileAChildHoldsTheStore";
  private static final String CORRUPT = "corruptStateThrowsCdcStoreExceptionNamingThePath";
  private static final String AFTER_CLOSE = "storeAfterCloseThrowsIllegalStateException";
  private static final String BAD_NAMES = "invalidNamesAreRefusedOnLoad";

  /**
   * The concurrency test is left out: it is slow with this store, and the memory store passes it.
   */
  @Test
  void theStoreWithoutAFlawPassesTheTestsTheFlawsFail() {
    Map<String, TestExecutionResult> results =
        run(
            FlawedStoreKits.None.class,
            Durability.class,
            DURABLE,
            Lifecycle.class,
            SECOND_OPEN,
            Lifecycle.class,
            CHILD_OPEN,
            Lifecycle.class,
            CHILD_HOLDS,
            Lifecycle.class,
            AFTER_CLOSE,
            Corruption.class,
            CORRUPT,
            Slots.class,
            BAD_NAMES);
    assertEquals(7, results.size(), results::toString);
    results.forEach(
        (test, result) ->
            assertEquals(
                TestExecutionResult.Status.SUCCESSFUL, result.getStatus(), test + ": " + result));
  }

  @Test
  void aStoreThatReturnsBeforeWritingLosesCheckpointsOnSigkill() {
    assertFails(
        FlawedStoreKits.AsyncStore.class, Durability.class, DURABLE, "store() returned for");
  }

  @Test
  void aStaleLockAfterACrashIsCaught() {
    assertFails(FlawedStoreKits.StaleLock.class, Durability.class, DURABLE, "cannot be reopened");
  }

  @Test
  void anInPlaceWriteIsSeenHalfWrittenByConcurrentLoads() {
    assertFails(FlawedStoreKits.InPlaceWrite.class, Concurrency.class, CONCURRENT, "reader");
  }

  @Test
  void twoFilesRenamedOneAfterTheOtherAreSeenTorn() {
    assertFails(FlawedStoreKits.SplitFiles.class, Concurrency.class, CONCURRENT, "reader");
  }

  @Test
  void aStoreWithoutALockIsOpenedTwice() {
    assertFails(FlawedStoreKits.NoLock.class, Lifecycle.class, SECOND_OPEN, "CdcStoreException");
    assertFails(FlawedStoreKits.NoLock.class, Lifecycle.class, CHILD_OPEN, "CdcStoreException");
    assertFails(FlawedStoreKits.NoLock.class, Lifecycle.class, CHILD_HOLDS, "CdcStoreException");
  }

  @Test
  void aStoreThatReadsDamageAsEmptyIsCaught() {
    assertFails(
        FlawedStoreKits.LenientLoad.class,
        Corruption.class,
        CORRUPT,
        "must throw CdcStoreException or return exactly");
  }

  @Test
  void aStoreThatKeepsStoringAfterCloseIsCaught() {
    assertFails(
        FlawedStoreKits.StoreAfterClose.class,
        Lifecycle.class,
        AFTER_CLOSE,
        "IllegalStateException");
  }

  @Test
  void aStoreThatDoesNotCheckSlotNamesOnLoadIsCaught() {
    assertFails(
        FlawedStoreKits.UncheckedNames.class, Slots.class, BAD_NAMES, "CdcConfigurationException");
  }

  private static void assertFails(Class<?> kit, Class<?> group, String test, String reason) {
    Map<String, TestExecutionResult> results = run(kit, group, test);
    TestExecutionResult result = results.get(test);
    assertEquals(
        TestExecutionResult.Status.FAILED,
        result == null ? null : result.getStatus(),
        kit.getSimpleName() + " must fail " + test + ": " + results);
    Throwable failure = result.getThrowable().orElseThrow();
    assertTrue(
        String.valueOf(failure).contains(reason)
            || String.valueOf(failure.getCause()).contains(reason),
        kit.getSimpleName() + "." + test + " failed, but not because of its flaw: " + failure);
  }

  /** Runs the given (group, method) pairs of a kit subclass; returns the result of each method. */
  private static Map<String, TestExecutionResult> run(Class<?> kit, Object... groupsAndMethods) {
    LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
    for (int i = 0; i < groupsAndMethods.length; i += 2) {
      request.selectors(
          selectNestedMethod(
              List.of(kit), (Class<?>) groupsAndMethods[i], (String) groupsAndMethods[i + 1]));
    }
    Map<String, TestExecutionResult> results = new LinkedHashMap<>();
    LauncherFactory.create()
        .execute(
            request.build(),
            new TestExecutionListener() {
              @Override
              public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                id.getSource()
                    .filter(MethodSource.class::isInstance)
                    .ifPresent(s -> results.put(((MethodSource) s).getMethodName(), result));
              }
            });
    return results;
  }
}
