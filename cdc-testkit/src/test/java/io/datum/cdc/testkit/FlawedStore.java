package io.datum.cdc.testkit;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStoreProvider;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A one-file-per-slot store with one deliberate flaw, so that {@link ConformanceKitSelfTest} can
 * check that the kit catches it. Without a flaw ({@link Flaw#NONE}) it passes the kit (except for
 * power loss, which it does not fsync against). URI: {@code flawed:/dir?flaw=NAME}.
 */
final class FlawedStore implements CdcCheckpointStore {

  enum Flaw {
    NONE,
    /** store() returns before the checkpoint is written. */
    ASYNC_STORE,
    /** Truncates and rewrites the slot's file in place. */
    IN_PLACE_WRITE,
    /**
     * Keeps the watermark and the partial transactions in two files, renamed one after the other.
     */
    SPLIT_FILES,
    /** Does not lock its directory. */
    NO_LOCK,
    /** Locks with a pid file that a crashed process leaves behind. */
    STALE_LOCK,
    /** Reads a damaged file as "no checkpoint". */
    LENIENT_LOAD,
    /** Keeps storing after close. */
    STORE_AFTER_CLOSE,
    /** load() does not check the slot name. */
    UNCHECKED_NAMES
  }

  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path dir;
  private final Flaw flaw;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final ExecutorService background;
  private volatile boolean closed;

  private FlawedStore(Path dir, Flaw flaw, FileChannel lockChannel, FileLock lock) {
    this.dir = dir;
    this.flaw = flaw;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.background = flaw == Flaw.ASYNC_STORE ? Executors.newSingleThreadExecutor() : null;
  }

  static FlawedStore open(Path directory, Flaw flaw) {
    Path dir = directory.toAbsolutePath();
    try {
      Files.createDirectories(dir);
      if (flaw == Flaw.NO_LOCK) {
        return new FlawedStore(dir, flaw, null, null);
      }
      if (flaw == Flaw.STALE_LOCK) {
        Files.writeString(
            dir.resolve("owner.pid"),
            "" + ProcessHandle.current().pid(),
            StandardOpenOption.CREATE_NEW);
        return new FlawedStore(dir, flaw, null, null);
      }
      if (!HELD.add(dir)) {
        throw new CdcStoreException("flawed store " + dir + " is in use in this JVM");
      }
      FileChannel channel =
          FileChannel.open(
              dir.resolve("store.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        channel.close();
        HELD.remove(dir);
        throw new CdcStoreException("flawed store " + dir + " is in use by another process");
      }
      return new FlawedStore(dir, flaw, channel, lock);
    } catch (FileAlreadyExistsException e) {
      throw new CdcStoreException(
          "flawed store " + dir + " is in use: " + e.getFile() + " exists", e);
    } catch (IOException e) {
      throw new CdcStoreException("cannot open flawed store " + dir + ": " + e, e);
    }
  }

  static String uri(Path directory, Flaw flaw) {
    return "flawed:" + directory.toAbsolutePath().toUri().getRawPath() + "?flaw=" + flaw;
  }

  @Override
  public SortedSet<String> slots() {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(n -> n.endsWith(".cp"))
          .map(n -> n.substring(0, n.length() - 3))
          .collect(Collectors.toCollection(TreeSet::new));
    } catch (IOException e) {
      throw new CdcStoreException("cannot list " + dir, e);
    }
  }

  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    if (flaw != Flaw.UNCHECKED_NAMES) {
      SlotNames.requireValid(slot);
    }
    Path file = dir.resolve(slot + ".cp");
    try {
      String text = Files.readString(file, StandardCharsets.UTF_8);
      if (flaw == Flaw.SPLIT_FILES) {
        text = text + Files.readString(dir.resolve(slot + ".tx"), StandardCharsets.UTF_8);
      }
      return Optional.of(decode(slot, text, file));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      if (flaw == Flaw.LENIENT_LOAD) {
        return Optional.empty();
      }
      throw new CdcStoreException("corrupt checkpoint file " + file + ": " + e, e);
    }
  }

  @Override
  public void store(CdcCheckpoint checkpoint) {
    if (closed && flaw != Flaw.STORE_AFTER_CLOSE) {
      throw new IllegalStateException("flawed store " + dir + " is closed");
    }
    String slot = checkpoint.slot();
    StringBuilder watermark = new StringBuilder("W " + checkpoint.watermark().asLong() + "\n");
    StringBuilder txs = new StringBuilder();
    for (PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
      txs.append("T ")
          .append(tx.txEndLsn().asLong())
          .append(' ')
          .append(tx.eventCount())
          .append(' ')
          .append(
              Arrays.stream(tx.acknowledgedRanges())
                  .mapToObj(Integer::toString)
                  .collect(Collectors.joining(",")))
          .append('\n');
    }
    for (CdcCheckpoint.AcknowledgedRun run : checkpoint.acknowledgedRuns()) {
      txs.append("R ")
          .append(run.firstTxEndLsn().asLong())
          .append(' ')
          .append(run.lastTxEndLsn().asLong())
          .append('\n');
    }
    ClusterIdentity cluster = checkpoint.cluster();
    if (cluster != null) {
      txs.append("C ")
          .append(cluster.systemIdentifier())
          .append(' ')
          .append(cluster.timeline())
          .append(' ')
          .append(cluster.database())
          .append('\n');
    }
    txs.append("END\n");
    try {
      switch (flaw) {
        case ASYNC_STORE ->
            background.execute(
                () -> {
                  try {
                    replace(dir.resolve(slot + ".cp"), watermark.toString() + txs);
                  } catch (IOException e) {
                    throw new UncheckedIOException(e);
                  }
                });
        case IN_PLACE_WRITE -> {
          byte[] bytes = (watermark.toString() + txs).getBytes(StandardCharsets.UTF_8);
          try (FileChannel channel =
              FileChannel.open(
                  dir.resolve(slot + ".cp"),
                  StandardOpenOption.CREATE,
                  StandardOpenOption.WRITE,
                  StandardOpenOption.TRUNCATE_EXISTING)) {
            Thread.yield(); // widens the window in which the file is empty
            channel.write(ByteBuffer.wrap(bytes));
          }
        }
        case SPLIT_FILES -> {
          replace(dir.resolve(slot + ".cp"), watermark.toString());
          Thread.yield(); // widens the window in which the two files do not match
          replace(dir.resolve(slot + ".tx"), txs.toString());
        }
        default -> replace(dir.resolve(slot + ".cp"), watermark.toString() + txs);
      }
    } catch (IOException e) {
      throw new CdcStoreException("cannot write " + dir + ": " + e, e);
    }
  }

  private void replace(Path file, String content) throws IOException {
    Path temp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
    Files.writeString(temp, content, StandardCharsets.UTF_8);
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static CdcCheckpoint decode(String slot, String text, Path file) {
    String[] lines = text.split("\n", -1);
    if (lines.length < 3 || !lines[0].startsWith("W ") || !lines[lines.length - 2].equals("END")) {
      throw new CdcStoreException("corrupt checkpoint file " + file);
    }
    List<PartialTransaction> txs = new ArrayList<>();
    List<CdcCheckpoint.AcknowledgedRun> runs = new ArrayList<>();
    ClusterIdentity cluster = null;
    for (int i = 1; i < lines.length - 2; i++) {
      String[] f = lines[i].split(" ", -1);
      if (f[0].equals("R")) {
        runs.add(
            new CdcCheckpoint.AcknowledgedRun(
                PgLsn.of(Long.parseLong(f[1])), PgLsn.of(Long.parseLong(f[2]))));
        continue;
      }
      if (f[0].equals("C")) {
        cluster =
            new ClusterIdentity(
                Long.parseLong(f[1]), Integer.parseInt(f[2]), lines[i].split(" ", 4)[3]);
        continue;
      }
      txs.add(
          PartialTransaction.ofRanges(
              PgLsn.of(Long.parseLong(f[1])),
              Integer.parseInt(f[2]),
              f.length < 4 || f[3].isEmpty()
                  ? new int[0]
                  : Arrays.stream(f[3].split(",")).mapToInt(Integer::parseInt).toArray()));
    }
    return new CdcCheckpoint(
        slot, PgLsn.of(Long.parseLong(lines[0].substring(2))), txs, runs, cluster);
  }

  @Override
  public String location() {
    return uri(dir, flaw);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (background != null) {
        background.shutdown();
        background.awaitTermination(10, TimeUnit.SECONDS);
      }
      if (flaw == Flaw.STALE_LOCK) {
        Files.deleteIfExists(dir.resolve("owner.pid"));
      }
      if (lock != null) {
        lock.release();
        lockChannel.close();
        HELD.remove(dir);
      }
    } catch (IOException | InterruptedException e) {
      throw new CdcStoreException("cannot close flawed store " + dir + ": " + e, e);
    }
  }

  /** Provides {@code flawed:} stores, for the kit's child JVMs. */
  public static final class Provider implements CheckpointStoreProvider {
    /** For ServiceLoader. */
    public Provider() {}

    @Override
    public String scheme() {
      return "flawed";
    }

    @Override
    public String description() {
      return "flawed:/dir?flaw=NAME - deliberately broken, for testing the conformance kit";
    }

    @Override
    public CdcCheckpointStore open(URI uri) {
      return FlawedStore.open(
          Path.of(uri.getPath()), Flaw.valueOf(uri.getQuery().substring("flaw=".length())));
    }
  }
}
