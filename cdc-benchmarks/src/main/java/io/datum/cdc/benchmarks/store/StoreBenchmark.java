package io.datum.cdc.benchmarks.store;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore;
import io.datum.cdc.store.rocksdb.RocksDbCheckpointStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Latency and throughput of {@link CdcCheckpointStore#store}: the durable write an acknowledgement
 * that moves the watermark waits for. One store per trial, shared by 1, 4 or 16 concurrent callers
 * (one benchmark method each), every caller storing the checkpoints of its own slot, as several
 * sources sharing one store do ({@code -p slots=shared} makes them all store one slot instead);
 * concurrent stores are group-committed, which shows as throughput growing with the callers while
 * latency grows less.
 *
 * <p>Modes: {@code SampleTime} gives the latency distribution ({@code p0.50}, {@code p0.99}, ...)
 * of one store call; {@code Throughput} gives stores per second, all callers together. Select one
 * with {@code -bm sample} or {@code -bm thrpt}.
 *
 * <p>{@code store} parameter, in the stores' URI syntax: the durable defaults {@code memory:}
 * (nothing to make durable: the floor), {@code file:}, {@code rocksdb:} and {@code mapdb:}, and the
 * relaxed configurations {@code rocksdb:?sync=false} (write-ahead log not fsynced: survives a
 * process crash, not a power loss) and {@code mapdb:?transactions=false} (pages written in place,
 * one fsync instead of two, not crash-safe). {@code file:} has no relaxed mode. The files go to a
 * new directory under the system property {@code datum.bench.dir} (default {@code java.io.tmpdir});
 * put it on the disk you mean to measure ({@code -jvmArgsAppend -Ddatum.bench.dir=/var/lib/x}).
 *
 * <p>The checkpoints are typical of out-of-order acknowledgement: a watermark and one partial
 * transaction of 100 events with 40 acknowledged in 4 ranges. Each caller cycles through 1,024
 * pre-built checkpoints with growing watermarks (after the 1,024th it starts again at the first; no
 * store checks that watermarks only grow).
 */
@BenchmarkMode({Mode.SampleTime, Mode.Throughput})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
public class StoreBenchmark {

  /** The store under test, opened in a new directory for each trial. */
  @State(Scope.Benchmark)
  public static class Store {
    @Param({
      "memory:",
      "file:",
      "rocksdb:",
      "rocksdb:?sync=false",
      "mapdb:",
      "mapdb:?transactions=false"
    })
    public String store;

    /**
     * {@code perCaller}: every caller stores its own slot (several sources sharing a store); {@code
     * shared}: all callers store the same slot, so a group commit keeps only the newest.
     */
    @Param({"perCaller"})
    public String slots;

    CdcCheckpointStore opened;
    Path directory;
    final AtomicInteger callers = new AtomicInteger();

    @Setup(Level.Trial)
    public void open() throws IOException {
      Path base =
          Path.of(System.getProperty("datum.bench.dir", System.getProperty("java.io.tmpdir")));
      Files.createDirectories(base);
      directory = Files.createTempDirectory(base, "datum-cdc-store-bench-");
      opened = openStore(store, directory);
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
      if (opened != null) {
        opened.close();
      }
      try (Stream<Path> files = Files.walk(directory)) {
        files.sorted(Comparator.reverseOrder()).forEach(StoreBenchmark::delete);
      }
    }
  }

  /** Opens the store a {@code store} parameter names, with its files under {@code directory}. */
  static CdcCheckpointStore openStore(String store, Path directory) {
    switch (store) {
      case "memory:":
        return new MemoryCheckpointStore();
      case "file:":
        return FileCheckpointStore.open(directory.resolve("file"));
      case "rocksdb:":
        return RocksDbCheckpointStore.open(
            directory.resolve("rocksdb"), RocksDbCheckpointStore.Options.defaults());
      case "rocksdb:?sync=false":
        return RocksDbCheckpointStore.open(
            directory.resolve("rocksdb"), new RocksDbCheckpointStore.Options(false));
      case "mapdb:":
        return MapDbCheckpointStore.open(
            directory.resolve("cdc.mapdb"), MapDbCheckpointStore.Options.DEFAULTS);
      case "mapdb:?transactions=false":
        return MapDbCheckpointStore.open(
            directory.resolve("cdc.mapdb"),
            MapDbCheckpointStore.Options.DEFAULTS.withTransactions(false));
      default:
        throw new IllegalArgumentException("unknown store parameter: " + store);
    }
  }

  private static void delete(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One caller: its own slot and a ring of checkpoints with growing watermarks. */
  @State(Scope.Thread)
  public static class Caller {
    static final int RING = 1_024;

    final CdcCheckpoint[] checkpoints = new CdcCheckpoint[RING];
    int next;

    @Setup(Level.Trial)
    public void build(Store store) {
      String slot;
      switch (store.slots) {
        case "perCaller":
          slot = "bench_caller_" + store.callers.getAndIncrement();
          break;
        case "shared":
          slot = "bench_shared";
          break;
        default:
          throw new IllegalArgumentException(
              "slots must be perCaller or shared, was " + store.slots);
      }
      int[] acknowledged = {1, 11, 20, 30, 50, 60, 90, 100};
      for (int i = 0; i < RING; i++) {
        long watermark = 0x1_0000_0000L + (i + 1) * 0x1000L;
        checkpoints[i] =
            new CdcCheckpoint(
                slot,
                PgLsn.of(watermark),
                List.of(
                    CdcCheckpoint.PartialTransaction.ofRanges(
                        PgLsn.of(watermark + 0x800), 100, acknowledged)));
      }
    }

    CdcCheckpoint next() {
      CdcCheckpoint checkpoint = checkpoints[next];
      next = (next + 1) & (RING - 1);
      return checkpoint;
    }
  }

  /** One caller storing. */
  @Benchmark
  @Threads(1)
  public void callers01(Store store, Caller caller) {
    store.opened.store(caller.next());
  }

  /** Four callers storing concurrently. */
  @Benchmark
  @Threads(4)
  public void callers04(Store store, Caller caller) {
    store.opened.store(caller.next());
  }

  /** Sixteen callers storing concurrently. */
  @Benchmark
  @Threads(16)
  public void callers16(Store store, Caller caller) {
    store.opened.store(caller.next());
  }
}
