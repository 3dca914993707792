package io.datum.cdc.testkit;

import static io.datum.cdc.testkit.KitFixtures.assertLoads;
import static io.datum.cdc.testkit.KitFixtures.at;
import static io.datum.cdc.testkit.KitFixtures.tx;
import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.checkpoint;
import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.isWellFormed;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance kit (TCK) for {@link CdcCheckpointStore}s: JUnit 5 tests that check the contract
 * in {@link CdcCheckpointStore}'s description. Every store shipped with datum-cdc runs it, and a
 * plugin author's store proves itself the same way, with a subclass like this one:
 *
 * <pre>{@code
 * class SqliteStoreConformanceTest extends CheckpointStoreConformanceKit {
 *
 *   @Override
 *   protected CdcCheckpointStore open(Path directory) {
 *     return SqliteCheckpointStore.open(directory.resolve("cdc.db"));
 *   }
 *
 *   @Override
 *   protected String uri(Path directory) {
 *     return "sqlite:" + directory.resolve("cdc.db"); // CheckpointStores.open(uri) in a child JVM
 *   }
 *
 *   // only if overwriting every file with 0x5A bytes does not make the store fail loudly:
 *   @Override
 *   protected void corrupt(Path directory) throws IOException { ... }
 * }
 * }</pre>
 *
 * <p>What a test needs decides whether it runs; a test that cannot run reports skipped (a JUnit
 * assumption), with the reason, and never passes without checking:
 *
 * <ul>
 *   <li>reopening, exclusivity in this JVM and corruption need a store that {@link #outlivesClose()
 *       outlives close} (every store but an in-memory one);
 *   <li>the tests with a child JVM (locking across processes, SIGKILL) need a {@link #uri} the
 *       child opens with {@link CheckpointStores#open(String)}, so the store's provider must be on
 *       the class path.
 * </ul>
 *
 * <p>The kit gives each test a fresh empty directory and closes every store it opened. The child
 * JVMs run {@code java} from {@code java.home} with this JVM's {@code java.class.path}, so the
 * store's provider must be registered for {@link java.util.ServiceLoader} on the test class path.
 * The groups:
 *
 * <ul>
 *   <li>{@link Basics}: load of an unknown slot is empty; a stored checkpoint loads back equal
 *       (watermark, partial transactions, acknowledged bits, the largest LSN); overwrites replace;
 *       50 slots are independent.
 *   <li>{@link Slots}: invalid slot names are refused with {@link CdcConfigurationException} and
 *       never reach the disk; edge-case valid names work.
 *   <li>{@link Lifecycle}: store after close throws {@link IllegalStateException}; close is
 *       idempotent; data survives close and reopen, also through {@link CheckpointStores#open}; a
 *       second open of a held store, in this JVM or in a child JVM, fails with {@link
 *       CdcStoreException}, and so does this JVM's open while a child holds the store.
 *   <li>{@link Concurrency}: 16 threads storing to shared and own slots while others load: no torn
 *       or lost value; close while storing.
 *   <li>{@link Durability}: a child JVM killed with SIGKILL keeps every checkpoint whose {@code
 *       store} returned, and never leaves a torn one.
 *   <li>{@link Corruption}: after {@link #corrupt}, open or load throws {@link CdcStoreException}
 *       naming the location; never empty, never a wrong value.
 * </ul>
 *
 * <p>The kit is tagged {@code postgres} (JUnit's {@link Tag}, inherited by every subclass), the tag
 * of the slow tests that start PostgreSQL or child JVMs: this project's build runs them in {@code
 * ./mvnw verify}, not in the unit tests of {@code ./mvnw test}.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("postgres")
public abstract class CheckpointStoreConformanceKit {

  /** Names PostgreSQL would refuse as slot names. */
  static final List<String> INVALID_SLOT_NAMES =
      Arrays.asList(
          "",
          "A",
          "../x",
          "a/b",
          "a".repeat(64),
          null,
          "a.json",
          "a-b",
          "a b",
          "\u00e4",
          "nul\u0000",
          "..",
          "C:x",
          "s\\t");

  @TempDir Path root;

  private Path directory;

  /** Returns the directory the store under test lives in, a new one per test. */
  final Path directory() {
    return directory;
  }

  private String location; // of the first store opened in the test
  private final List<CdcCheckpointStore> stores = Collections.synchronizedList(new ArrayList<>());
  private final List<StoreChild> children = new ArrayList<>();

  /** For subclasses. */
  protected CheckpointStoreConformanceKit() {}

  /**
   * Opens the store kept in directory: an empty directory the first time, the same one again to
   * reopen after close().
   *
   * @param directory the test's directory, existing
   * @return the open store; the kit closes it
   */
  protected abstract CdcCheckpointStore open(Path directory);

  /**
   * The URI that {@link CheckpointStores#open(String)} in a child JVM uses to open the store kept
   * in {@code directory}; null if the store has none (no provider on the class path, or state that
   * a child cannot reach), which skips the tests that need a child JVM: locking across processes
   * and SIGKILL.
   *
   * @param directory the test's directory
   * @return a URI string, or null
   */
  protected abstract String uri(Path directory);

  /**
   * Whether a store opened again on the same directory sees what an earlier one stored, so it has
   * state to keep exclusive and to damage. Default true; an in-memory store returns false, which
   * skips the reopen, exclusivity and corruption tests.
   *
   * @return true if the stored state outlives {@link CdcCheckpointStore#close()}
   */
  protected boolean outlivesClose() {
    return true;
  }

  /**
   * Damages the stored state so that a store opened afterwards must throw CdcStoreException on open
   * or on load, naming a path under directory. Default: overwrites every regular file under
   * directory (except *.lock / LOCK files) with the same number of 0x5A bytes. Override when that
   * is not enough.
   *
   * @param directory the directory of a closed store
   * @throws IOException if the files cannot be damaged
   */
  protected void corrupt(Path directory) throws IOException {
    KitFixtures.overwriteFiles(directory, (byte) 0x5A);
  }

  @BeforeEach
  void createDirectory() throws IOException {
    directory = Files.createDirectories(root.resolve("store"));
  }

  @AfterEach
  void closeStoresAndChildren() throws Exception {
    Exception failure = null;
    List<AutoCloseable> all = new ArrayList<>(children);
    List<CdcCheckpointStore> open = new ArrayList<>(stores);
    Collections.reverse(open);
    all.addAll(open);
    for (AutoCloseable closeable : all) {
      try {
        closeable.close();
      } catch (Exception e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  // ---------------------------------------------------------------------------------- helpers

  /** Opens the store on the test's directory; the kit closes it after the test. */
  final CdcCheckpointStore openStore() {
    CdcCheckpointStore store =
        Objects.requireNonNull(open(directory), "open(directory) returned null");
    stores.add(store);
    if (location == null) {
      location = store.location();
    }
    return store;
  }

  /** Returns {@link #uri}, or skips the test if there is none. */
  final String childUri() {
    String uri = uri(directory);
    assumeTrue(
        uri != null, "uri(directory) is null: the store has no URI a child JVM could open it by");
    return uri;
  }

  /** Skips the test if the store keeps nothing past close. */
  final void assumeOutlivesClose() {
    assumeTrue(outlivesClose(), "outlivesClose() is false: the store keeps nothing past close");
  }

  /** The number of rounds of the random-SIGKILL test, {@code -Ddatum.cdc.testkit.crashRounds}. */
  static int crashRounds() {
    return Integer.getInteger("datum.cdc.testkit.crashRounds", 5);
  }

  final StoreChild startChild(String... args) throws IOException {
    StoreChild child = StoreChild.start(root.resolve("child-" + children.size() + ".err"), args);
    children.add(child);
    return child;
  }

  /**
   * Asserts that the exception's message names the store: the test directory, a path under it, or
   * the {@link CdcCheckpointStore#location()} of the first store the test opened (for a store kept
   * elsewhere, such as in a database table).
   */
  final void assertNamesDirectory(Throwable e) {
    if (location == null || !String.valueOf(e.getMessage()).contains(location)) {
      KitFixtures.assertNames(directory, e);
    }
  }

  final String listing() throws IOException {
    return KitFixtures.listing(root);
  }

  // ----------------------------------------------------------------------------------- groups

  /**
   * Store, load and overwrite: an unknown slot loads empty; what was stored loads back equal
   * (watermark, every partial transaction's end LSN, event count and acknowledged bits, from {@code
   * 0/0} to {@code FFFFFFFF/FFFFFFFF}); an overwrite replaces, also with an older watermark; 50
   * slots are independent; {@link CdcCheckpointStore#slots()}, where supported, lists exactly the
   * stored slots in order; {@link CdcCheckpointStore#location()} describes the store.
   */
  @Nested
  public class Basics {

    @Test
    void loadOfAnUnknownSlotIsEmpty() {
      CdcCheckpointStore store = openStore();
      assertEquals(Optional.empty(), store.load("never_stored"));
      store.store(at("stored", "0/10"));
      assertEquals(Optional.empty(), store.load("never_stored"));
      assertEquals(Optional.empty(), store.load("stored_not"));
    }

    @Test
    void storeThenLoadReturnsAnEqualCheckpoint() {
      CdcCheckpointStore store = openStore();
      List<CdcCheckpoint> checkpoints =
          List.of(
              CdcCheckpoint.atWatermark("zero", PgLsn.ZERO),
              at("plain", "0/16B3748"),
              at(
                  "partial",
                  "0/16B3748",
                  tx("0/16B37A0", 3, 1),
                  tx("0/16B3800", 5, 0, 2, 3, 4),
                  tx("1/0", 1, 0),
                  tx("1/10", 4)), // no event acknowledged: kept as stored
              at(
                  "bits",
                  "A/0",
                  tx("A/1", 64, 0, 63),
                  tx("A/2", 65, 64),
                  tx("A/3", 1_000_000, alternating(0, 20_000)),
                  tx("A/4", Integer.MAX_VALUE, 0, 1, 1000, 1_000_000)),
              at("highest", "FFFFFFFF/FFFFFFFE", tx("FFFFFFFF/FFFFFFFF", 2, 1)),
              at("max_lsn", "FFFFFFFF/FFFFFFFF"),
              at("upper_half", "80000000/0", tx("80000000/1", 7, 6)),
              new CdcCheckpoint(
                  "runs",
                  PgLsn.parse("0/100"),
                  List.of(tx("0/200", 3, 1), tx("0/900", 2, 0)),
                  List.of(
                      new CdcCheckpoint.AcknowledgedRun(PgLsn.parse("0/300"), PgLsn.parse("0/800")),
                      new CdcCheckpoint.AcknowledgedRun(PgLsn.parse("1/0"), PgLsn.parse("1/0")),
                      new CdcCheckpoint.AcknowledgedRun(
                          PgLsn.parse("FFFFFFFF/0"), PgLsn.parse("FFFFFFFF/FFFFFFFF"))),
                  new ClusterIdentity(-1L, Integer.MAX_VALUE, "d".repeat(63))),
              CdcCheckpoint.atWatermark("identified", PgLsn.parse("0/16B3748"))
                  .withCluster(new ClusterIdentity(7_421_343_521_349_893_421L, 1, "postgres")),
              CdcCheckpoint.atWatermark("snapshot", PgLsn.parse("0/16B3748"))
                  .withSnapshot(snapshotProgress()),
              CdcCheckpoint.atWatermark("snapshot_done", PgLsn.parse("1/0"))
                  .withSnapshot(new SnapshotProgress(true, null, List.of())));
      for (CdcCheckpoint c : checkpoints) {
        store.store(c);
      }
      for (CdcCheckpoint c : checkpoints) {
        assertLoads(store, c);
        PartialTransaction[] expected = c.acknowledgedBeyond().toArray(new PartialTransaction[0]);
        List<PartialTransaction> loaded = store.load(c.slot()).orElseThrow().acknowledgedBeyond();
        for (int i = 0; i < expected.length; i++) {
          assertArrayEquals(
              expected[i].acknowledgedRanges(),
              loaded.get(i).acknowledgedRanges(),
              c.slot() + " tx " + i + " acknowledged ranges");
          assertEquals(
              expected[i].eventCount(),
              loaded.get(i).eventCount(),
              c.slot() + " tx " + i + " count");
        }
      }
    }

    @Test
    void overwriteReturnsTheNewest() {
      CdcCheckpointStore store = openStore();
      List<CdcCheckpoint> versions =
          List.of(
              at("s", "0/10", tx("0/20", 3, 0), tx("0/30", 2, 1)),
              at("s", "0/20", tx("0/30", 2, 0, 1)),
              at("s", "0/40"),
              at("s", "0/40", tx("0/50", 9, 8)),
              at("s", "0/38")); // replace means replace, also with an older watermark
      for (CdcCheckpoint c : versions) {
        store.store(c);
        assertLoads(store, c);
      }
      for (long n = 1; n <= 100; n++) {
        store.store(checkpoint("s", n));
      }
      assertLoads(store, checkpoint("s", 100));
    }

    @Test
    void fiftySlotsAreIndependent() {
      CdcCheckpointStore store = openStore();
      for (int i = 0; i < 50; i++) {
        store.store(checkpoint(String.format("slot_%02d", i), 1000 + i));
      }
      for (int i = 0; i < 50; i += 2) {
        store.store(checkpoint(String.format("slot_%02d", i), 5000 + i));
      }
      for (int i = 0; i < 50; i++) {
        assertLoads(
            store, checkpoint(String.format("slot_%02d", i), (i % 2 == 0 ? 5000 : 1000) + i));
      }
      assertEquals(Optional.empty(), store.load("slot_50"));
      assertEquals(Optional.empty(), store.load("slot_0"));
    }

    @Test
    void slotsListsExactlyTheStoredSlotsSorted() {
      CdcCheckpointStore store = openStore();
      SortedSet<String> none;
      try {
        none = store.slots();
      } catch (UnsupportedOperationException e) {
        assumeTrue(false, "the store does not list its slots: " + e.getMessage());
        return;
      }
      assertEquals(List.of(), List.copyOf(none), "slots() of an empty store");
      for (String slot : List.of("c", "a_1", "b", "a", "c")) {
        store.store(at(slot, "0/10"));
      }
      assertEquals(List.of("a", "a_1", "b", "c"), List.copyOf(store.slots()));
    }

    @Test
    void locationDescribesTheStore() {
      CdcCheckpointStore store = openStore();
      String location = store.location();
      assertTrue(
          location != null && !location.isBlank(),
          "location() must describe the store, was " + location);
      if (uri(directory) != null) {
        KitFixtures.assertNames(directory, "location()", location, null);
      }
    }

    private int[] alternating(int from, int to) {
      int[] bits = new int[(to - from) / 2];
      for (int i = 0; i < bits.length; i++) {
        bits[i] = from + 2 * i;
      }
      return bits;
    }
  }

  /**
   * Slot names: invalid ones ({@code ""}, {@code "A"}, {@code "../x"}, {@code "a/b"}, 64
   * characters, null, ...) are refused with {@link CdcConfigurationException} by load and store,
   * and nothing named after them appears on disk; edge-case valid names (63 characters, {@code
   * "_"}, {@code "0"}, {@code "con"}) work.
   */
  @Nested
  public class Slots {

    @Test
    void invalidNamesAreRefusedOnLoad() {
      CdcCheckpointStore store = openStore();
      for (String name : INVALID_SLOT_NAMES) {
        assertThrows(
            CdcConfigurationException.class, () -> store.load(name), "load(" + quote(name) + ")");
      }
    }

    @Test
    void invalidNamesAreRefusedOnStore() {
      CdcCheckpointStore store = openStore();
      store.store(at("valid", "0/10"));
      for (String name : INVALID_SLOT_NAMES) {
        // a CdcCheckpoint cannot carry an invalid name: its constructor refuses it
        assertThrows(
            CdcConfigurationException.class,
            () -> store.store(CdcCheckpoint.atWatermark(name, PgLsn.of(1))),
            "store of slot " + quote(name));
      }
      RuntimeException e =
          assertThrows(RuntimeException.class, () -> store.store(null), "store(null)");
      assertTrue(
          e instanceof NullPointerException || e instanceof CdcConfigurationException,
          "store(null) must throw NullPointerException or CdcConfigurationException, threw " + e);
      assertLoads(store, at("valid", "0/10"));
    }

    @Test
    void invalidNamesNeverReachTheDisk() throws IOException {
      CdcCheckpointStore store = openStore();
      store.store(at("valid", "0/10"));
      for (String name : INVALID_SLOT_NAMES) {
        assertThrows(CdcConfigurationException.class, () -> store.load(name));
        assertThrows(
            CdcConfigurationException.class,
            () -> store.store(CdcCheckpoint.atWatermark(name, PgLsn.of(1))));
      }
      store.close();
      List<String> segments = new ArrayList<>();
      for (String name : INVALID_SLOT_NAMES) {
        if (name != null) {
          for (String segment : name.split("[/\\\\]")) {
            if (!segment.isEmpty() && !segment.equals("..") && !segment.equals(".")) {
              segments.add(segment);
            }
          }
        }
      }
      List<Path> named = new ArrayList<>();
      try (Stream<Path> all = Files.walk(root)) {
        all.filter(p -> !p.equals(root))
            .forEach(
                p -> {
                  String file = p.getFileName().toString();
                  if (segments.stream().anyMatch(s -> file.equals(s) || file.startsWith(s + "."))) {
                    named.add(p);
                  }
                });
      }
      assertEquals(List.of(), named, "files named after invalid slot names: " + listing());
    }

    @Test
    void edgeCaseValidNamesWork() {
      CdcCheckpointStore store = openStore();
      List<String> names =
          List.of("_", "0", "z".repeat(63), "a_0".repeat(21), "con", "nul", "lpt1", "json");
      for (int i = 0; i < names.size(); i++) {
        store.store(checkpoint(names.get(i), 10 + i));
      }
      for (int i = 0; i < names.size(); i++) {
        assertLoads(store, checkpoint(names.get(i), 10 + i));
      }
    }

    private String quote(String name) {
      return name == null ? "null" : '"' + name.replace("\u0000", "\\0") + '"';
    }
  }

  /**
   * Close, reopen and exclusive use: store after close throws {@link IllegalStateException} and
   * changes nothing; close is idempotent; a reopened store, and one opened by {@link
   * CheckpointStores#open(String)} with {@link #uri}, sees the data; while a store is open, a
   * second open in this JVM or in a child JVM fails with {@link CdcStoreException} naming the
   * directory, without disturbing the first; after close a child JVM can open it.
   */
  @Nested
  public class Lifecycle extends LifecycleChecks {
    Lifecycle() {
      super(CheckpointStoreConformanceKit.this);
    }
  }

  /**
   * Concurrency: 16 threads each store 200 strictly increasing checkpoints, alternately to their
   * own slot and to 4 shared slots, while 2 threads load every slot: no load throws or returns a
   * torn, foreign or older value; afterwards each own slot holds its thread's last checkpoint and
   * each shared slot the last checkpoint of one of the threads. Closing while 4 threads store: each
   * store returns or throws {@link IllegalStateException} (or {@link CdcStoreException}), none that
   * began after close returned succeeds, and every returned store is kept.
   */
  @Nested
  public class Concurrency {

    @Test
    void concurrentStoresAndLoadsNeverTearOrLose() throws Exception {
      new ConcurrentWorkload(openStore()).run();
    }

    @Test
    void closeWhileStoringLetsEachStoreFinishOrRefuse() throws Exception {
      ConcurrentWorkload.storeUntilClosed(openStore(), 4);
    }

    @Test
    void closeWhileStoringKeepsEveryStoreThatReturned() throws Exception {
      assumeOutlivesClose();
      CdcCheckpointStore store = openStore();
      long[] lastReturned = ConcurrentWorkload.storeUntilClosed(store, 4);
      {
        CdcCheckpointStore reopened = openStore();
        for (int t = 0; t < lastReturned.length; t++) {
          String slot = "closing_" + t;
          CdcCheckpoint loaded =
              reopened.load(slot).orElseThrow(() -> new AssertionError("lost " + slot));
          long n = loaded.watermark().asLong();
          assertTrue(isWellFormed(loaded), "torn checkpoint " + loaded);
          assertTrue(
              n >= lastReturned[t] && n <= lastReturned[t] + 1,
              slot + ": store() returned for " + lastReturned[t] + " but the store holds " + n);
        }
      }
    }
  }

  /**
   * Crash safety: a child JVM stores checkpoints as fast as it can and prints each {@code n} once
   * its {@code store} returned; it is killed with SIGKILL after 200, and in a second test 5 times
   * after a random 0 to 300, stores. The reopened store holds exactly the checkpoint of the last
   * {@code n} printed (or of the one after it, begun but not yet reported), every part of it
   * consistent, and no lock left over from the dead process prevents reopening.
   */
  @Nested
  public class Durability extends DurabilityChecks {
    Durability() {
      super(CheckpointStoreConformanceKit.this);
    }
  }

  /**
   * Corruption: after {@link #corrupt} damaged a closed store's files, open throws {@link
   * CdcStoreException}, or load does, with a message naming the directory or a file in it; a load
   * never returns empty or a value other than the one stored.
   */
  @Nested
  public class Corruption extends CorruptionChecks {
    Corruption() {
      super(CheckpointStoreConformanceKit.this);
    }
  }

  /**
   * Snapshot progress with every kind of field: an initial snapshot holding the slot, a table not
   * started, one with a composite key and acknowledged keys beyond the prefix, values with tabs,
   * quotes, backslashes and non-ASCII text, and an empty string as a key value.
   */
  static SnapshotProgress snapshotProgress() {
    return new SnapshotProgress(
        false,
        PgLsn.parse("0/16B3700"),
        List.of(
            SnapshotProgress.TableSnapshot.whole("initial", new TableId("public", "orders")),
            new SnapshotProgress.TableSnapshot(
                "request-0/16B3000",
                new TableId("Sales \"EU\"", "lines\tü"),
                List.of(
                    new SnapshotProgress.KeyRange(
                        List.of("41", "a\tb"), List.of("99", "z"), List.of(List.of("43", ""))),
                    new SnapshotProgress.KeyRange(
                        List.of("99", "z"),
                        null,
                        List.of(List.of("100", "\\x00"), List.of("120", "日本")))))));
  }
}
