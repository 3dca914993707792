package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.spi.AbstractCheckpointStore;
import io.datum.cdc.spi.StoreFiles;
import io.datum.cdc.spi.StoreLock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.zip.CRC32C;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.Serializer;

/**
 * A {@link CdcCheckpointStore} that keeps the checkpoints of every slot in a MapDB 3.1 {@code
 * HTreeMap}, slot name to checkpoint (in {@link io.datum.cdc.spi.CheckpointCodec}'s form, with its
 * CRC32C). URI: {@code mapdb:/var/lib/app/cdc.mapdb}, see {@link Options} for the query parameters.
 *
 * <p><b>Layout.</b> The path names the <em>selector</em>, a file of two 512-byte records; beside it
 * live two MapDB files, {@code <file>.0} and {@code <file>.1}, and {@code <file>.lock}. Each record
 * of the selector holds a generation number and a CRC32C; the valid record with the highest
 * generation {@code g} names the current data file, {@code <file>.<g % 2>}. Copy, move or back up
 * the three files together, only while no store has them open.
 *
 * <p><b>Durability (the default, {@code transactions=true}).</b> A batch of checkpoints (concurrent
 * {@link #store} calls share one) is written into the <em>other</em> data file, the one the
 * selector does not name: the changes of the batch before it and of this one, or the whole state
 * after an open. MapDB commits and fsyncs that file; then the selector record of generation {@code
 * g + 1} is written and fsynced, which makes that file current. The current file is never written
 * (MapDB rewrites its unchanged header checksum on close), so a crash or power loss at any moment
 * leaves the selector naming a complete, fsynced file: the reopened store holds, for every slot,
 * the checkpoint of the last batch whose selector record reached the disk, which includes every
 * {@code store} that returned, and the partly written other file is rebuilt. A batch costs two
 * fsyncs and the writes of the changed entries. The kit's SIGKILL tests pass this way, also with
 * 300 kills at random moments ({@code -Ddatum.cdc.testkit.crashRounds=300}); a torn selector record
 * fails its CRC32C and the other one is used.
 *
 * <p>MapDB's own write-ahead log ({@code DBMaker.transactionEnable()}) is not used: MapDB 3.1.0
 * writes a commit's changes into the file in place after fsyncing its log, but never replays that
 * log (its store deletes the log files when it opens), so a process killed during those in-place
 * writes leaves a file that is half old, half new: the kit's random-SIGKILL test, run with 600
 * rounds on a store built on {@code transactionEnable()}, reopened it after about 30 kills to a
 * value MapDB could not read.
 *
 * <p><b>Failures.</b> A selector or data file that is damaged, missing or not of this store makes
 * {@link #open} throw, and a damaged value makes {@link #load} throw, a {@link CdcStoreException}
 * naming the file (and the slot); MapDB's exceptions never escape. After a failed {@link #store}
 * the store refuses further stores; close it and open it again.
 *
 * <p><b>Exclusivity.</b> {@code <file>.lock} ({@link StoreLock}) is held until {@link #close}: a
 * second open, in this JVM or another process, fails with {@link CdcStoreException} {@code "mapdb
 * checkpoint store <file> is in use by another process or store: ..."}.
 *
 * <p>A {@link #load} waits while a batch is being written, so it never sees a checkpoint that is
 * not durable yet. Safe for use by several threads.
 */
public final class MapDbCheckpointStore extends AbstractCheckpointStore {

  /** The name of the MapDB map holding the checkpoints, slot name to encoded checkpoint. */
  public static final String MAP_NAME = "datum_cdc_checkpoints";

  /** The first four bytes of a valid selector record, ASCII {@code DCMS}. */
  private static final int SELECTOR_MAGIC = 0x44434D53;

  /** One selector record per generation parity, each in a sector of its own. */
  private static final int RECORD_BYTES = 512;

  /**
   * The options of a MapDB checkpoint store; immutable. In a URI: {@code
   * mapdb:/path/file.mapdb?transactions=true&mmap=false}.
   *
   * @param transactions true (default): every batch goes into the data file the selector does not
   *     name, then the selector moves to it, so a crash leaves the previous or the new state (see
   *     the class description); false: every batch is written in place into the current data file,
   *     one fsync per batch instead of two, <b>not crash-safe</b>: a crash during a store can leave
   *     that file unreadable or its map damaged; for throwaway state only. URI {@code
   *     transactions=true|false}
   * @param memoryMapped false (default) to read and write the file with {@code read}/{@code write}
   *     calls; true to map the data files into memory (MapDB's {@code fileMmapEnableIfSupported});
   *     if another program truncates a mapped file, the JVM dies with SIGBUS. URI {@code
   *     mmap=true|false}
   */
  public record Options(boolean transactions, boolean memoryMapped) {

    /** Transactions on, no memory mapping. */
    public static final Options DEFAULTS = new Options(true, false);

    /**
     * Returns these options with {@code transactions} changed.
     *
     * @param transactions see {@link Options}
     * @return the new options
     */
    public Options withTransactions(boolean transactions) {
      return new Options(transactions, memoryMapped);
    }

    /**
     * Returns these options with {@code memoryMapped} changed.
     *
     * @param memoryMapped see {@link Options}
     * @return the new options
     */
    public Options withMemoryMapped(boolean memoryMapped) {
      return new Options(transactions, memoryMapped);
    }
  }

  private final Path file;
  private final Options options;
  private final FileChannel selector;
  private final DB[] dbs = new DB[2];
  private final List<Map<String, byte[]>> maps = new ArrayList<>(List.of(Map.of(), Map.of()));

  /** Batches hold the write lock, loads the read lock: a load sees committed values only. */
  private final ReentrantReadWriteLock data = new ReentrantReadWriteLock();

  private long generation; // the selector's; data file generation % 2 is current
  private boolean otherStale = true; // the other file does not hold the state before lastBatch
  private Map<String, byte[]> lastBatch = Map.of();
  private Exception broken;

  private MapDbCheckpointStore(Path file, Options options, StoreLock lock, FileChannel selector) {
    super("mapdb checkpoint store " + file, lock);
    this.file = file;
    this.options = options;
    this.selector = selector;
  }

  /**
   * Opens the store in {@code file} with the {@link Options#DEFAULTS default options}; see {@link
   * #open(Path, Options)}.
   *
   * @param file the selector file of the store
   * @return the open store; the caller closes it
   * @throws NullPointerException if {@code file} is null
   * @throws CdcConfigurationException if the path names no file (a root directory)
   * @throws CdcStoreException as {@link #open(Path, Options)}
   */
  public static MapDbCheckpointStore open(Path file) {
    return open(file, Options.DEFAULTS);
  }

  /**
   * Opens the store whose selector is {@code file}: creates missing parent directories and, if the
   * selector does not exist, an empty store (the selector written under a temporary name, fsynced
   * and renamed into place); locks it; opens the current data file.
   *
   * @param file the selector file; a relative path is resolved against the working directory
   * @param options the options, not null
   * @return the open store; the caller closes it
   * @throws NullPointerException if an argument is null
   * @throws CdcConfigurationException if the path names no file (a root directory)
   * @throws CdcStoreException naming the file if it is in use by another process or store of this
   *     JVM, is a directory, is not the selector of a datum-cdc MapDB store (such as a MapDB file),
   *     has no valid record, names a data file that is missing or damaged, or cannot be created,
   *     read or locked
   */
  public static MapDbCheckpointStore open(Path file, Options options) {
    return open(file, options, true);
  }

  /**
   * Opens the store like {@link #open(Path, Options)}; with {@code create} false only an existing
   * selector file of this layout is opened, and nothing is created beside any other path (no lock
   * file either), for commands that only read, such as {@code pgcdc checkpoint show}.
   *
   * @param file the selector file
   * @param options the options, not null
   * @param create whether a missing store is created
   * @return the open store; the caller closes it
   * @throws CdcStoreException as {@link #open(Path, Options)}, or with {@code create} false if the
   *     path is not a datum-cdc MapDB selector file (nothing was touched)
   */
  public static MapDbCheckpointStore open(Path file, Options options, boolean create) {
    if (!create && !isSelector(file)) {
      throw new CdcStoreException(
          "mapdb checkpoint store "
              + file
              + ": no store there (not the selector file of a datum-cdc MapDB store); nothing was"
              + " read or written");
    }
    Objects.requireNonNull(options, "options");
    Path path = Objects.requireNonNull(file, "file").toAbsolutePath().normalize();
    if (path.getParent() == null) {
      throw new CdcConfigurationException(
          "mapdb checkpoint store path \"" + file + "\" names no file");
    }
    StoreFiles.createDirectories(path.getParent(), "mapdb checkpoint store");
    if (Files.isDirectory(path)) {
      throw new CdcStoreException(
          "mapdb checkpoint store " + path + " is a directory; name a file in it instead");
    }
    StoreLock lock = StoreLock.acquire(sibling(path, ".lock"), "mapdb checkpoint store " + path);
    MapDbCheckpointStore store = null;
    try {
      if (!Files.exists(path)) {
        create(path);
      }
      FileChannel selector =
          FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
      store = new MapDbCheckpointStore(path, options, lock, selector);
      store.generation = store.readSelector();
      int current = store.current();
      if (store.generation > 0 || Files.exists(store.dataFile(current))) {
        store.openData(current, false);
      }
      return store;
    } catch (IOException | RuntimeException | AssertionError e) {
      CdcStoreException failure =
          e instanceof CdcStoreException c
              ? c
              : new CdcStoreException("cannot open mapdb checkpoint store " + path + ": " + e, e);
      if (store != null) {
        store.close(); // releases the lock
      } else {
        try {
          lock.release();
        } catch (IOException suppressed) {
          failure.addSuppressed(suppressed);
        }
      }
      throw failure;
    }
  }

  /**
   * Returns the selector file of this store; the data files are {@code <file>.0} and {@code
   * <file>.1}.
   *
   * @return the absolute path of the selector
   */
  public Path file() {
    return file;
  }

  /**
   * Returns the options the store was opened with.
   *
   * @return the options
   */
  public Options options() {
    return options;
  }

  @Override
  protected byte[] read(String slot) {
    data.readLock().lock();
    try {
      return maps.get(current()).get(slot);
    } finally {
      data.readLock().unlock();
    }
  }

  @Override
  protected List<String> list() {
    data.readLock().lock();
    try {
      return new ArrayList<>(maps.get(current()).keySet());
    } finally {
      data.readLock().unlock();
    }
  }

  /** Writes the batch into the other data file, then moves the selector to it; see the class. */
  @Override
  protected void write(Map<String, byte[]> batch) throws Exception {
    data.writeLock().lock();
    try {
      if (broken != null) {
        throw new CdcStoreException(
            "mapdb checkpoint store " + file + " refuses stores after a failed one; reopen it",
            broken);
      }
      int current = current();
      if (!options.transactions()) {
        if (dbs[current] == null) {
          openData(current, true);
        }
        commit(current, batch, Map.of());
        return;
      }
      int other = 1 - current;
      if (otherStale || dbs[other] == null) { // after an open, or the first batch
        if (dbs[other] != null) {
          dbs[other].close();
          dbs[other] = null;
        }
        Files.deleteIfExists(dataFile(other));
        openData(other, true);
        commit(other, maps.get(current), batch);
      } else {
        commit(other, lastBatch, batch);
      }
      writeSelector(generation + 1);
      generation++;
      lastBatch = batch;
      otherStale = false;
    } catch (Exception | AssertionError e) {
      broken = e instanceof Exception x ? x : new IllegalStateException(e);
      throw broken;
    } finally {
      data.writeLock().unlock();
    }
  }

  /** Closes both data files and the selector. */
  @Override
  protected void release() throws IOException {
    try (selector) {
      for (DB db : dbs) {
        if (db != null) {
          db.close(); // rewrites the header checksum of the last commit: the same bytes
        }
      }
    }
  }

  /**
   * Returns the URI of this store, such as {@code mapdb:/var/lib/app/cdc.mapdb}, with the query
   * parameters of options that differ from the defaults.
   *
   * @return the store's URI
   */
  @Override
  public String location() {
    List<String> query = new ArrayList<>();
    if (!options.transactions()) {
      query.add("transactions=false");
    }
    if (options.memoryMapped()) {
      query.add("mmap=true");
    }
    return "mapdb:"
        + file.toUri().getRawPath()
        + (query.isEmpty() ? "" : "?" + String.join("&", query));
  }

  private int current() {
    return (int) (generation & 1);
  }

  private Path dataFile(int index) {
    return sibling(file, "." + index);
  }

  private static Path sibling(Path file, String suffix) {
    return file.resolveSibling(file.getFileName() + suffix);
  }

  /** Opens (or, with {@code create}, creates) data file {@code index} and its map. */
  private void openData(int index, boolean create) throws IOException {
    Path path = dataFile(index);
    if (!create && !Files.exists(path)) {
      throw new CdcStoreException(
          "corrupt mapdb checkpoint store " + file + ": its data file " + path + " is missing");
    }
    try {
      DBMaker.Maker maker = DBMaker.fileDB(path.toFile());
      if (options.memoryMapped()) {
        maker = maker.fileMmapEnableIfSupported().cleanerHackEnable();
      }
      dbs[index] = maker.make();
      var map = dbs[index].hashMap(MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY);
      maps.set(index, create ? map.createOrOpen() : map.open());
    } catch (RuntimeException | AssertionError e) {
      throw new CdcStoreException(
          "corrupt mapdb checkpoint store " + file + ": MapDB cannot open " + path + " (" + e + ")",
          e);
    }
    if (create) {
      StoreFiles.forceDirectory(file.getParent());
    }
  }

  /** Puts both maps' entries into data file {@code index} and commits it (MapDB fsyncs). */
  private void commit(int index, Map<String, byte[]> first, Map<String, byte[]> second) {
    maps.get(index).putAll(first);
    maps.get(index).putAll(second);
    dbs[index].commit();
  }

  private long readSelector() throws IOException {
    ByteBuffer bytes = ByteBuffer.allocate(2 * RECORD_BYTES + 1);
    while (selector.read(bytes, bytes.position()) > 0) {
      // read it all
    }
    if (bytes.position() != 2 * RECORD_BYTES) { // such as the one MapDB file of datum-cdc 0.1
      String size = bytes.position() > 2 * RECORD_BYTES ? "more than " : bytes.position() + " of ";
      throw new CdcStoreException(
          "mapdb checkpoint store "
              + file
              + " is not the selector of a datum-cdc MapDB store ("
              + size
              + 2 * RECORD_BYTES
              + " bytes)");
    }
    long best = -1;
    for (int i = 0; i < 2; i++) {
      int at = i * RECORD_BYTES;
      long generation = bytes.getLong(at + 4);
      if (bytes.getInt(at) == SELECTOR_MAGIC
          && bytes.getInt(at + 12) == crc(bytes, at)
          && (generation & 1) == i) {
        best = Math.max(best, generation);
      }
    }
    if (best < 0) {
      throw new CdcStoreException(
          "corrupt mapdb checkpoint store " + file + ": neither selector record is valid");
    }
    return best;
  }

  /** Writes and fsyncs the selector record of {@code generation}. */
  private void writeSelector(long generation) throws IOException {
    selector.write(record(generation), (generation & 1) * RECORD_BYTES);
    selector.force(false);
  }

  private static ByteBuffer record(long generation) {
    ByteBuffer record = ByteBuffer.allocate(16).putInt(SELECTOR_MAGIC).putLong(generation);
    record.putInt(crc(record, 0)).flip();
    return record;
  }

  /** Whether {@code file} has this layout's selector size and a record with its magic. */
  private static boolean isSelector(Path file) {
    try {
      if (!Files.isRegularFile(file) || Files.size(file) != 2L * RECORD_BYTES) {
        return false;
      }
      try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
        ByteBuffer magic = ByteBuffer.allocate(4);
        while (magic.hasRemaining() && in.read(magic) >= 0) {
          // read the first record's magic
        }
        return magic.getInt(0) == SELECTOR_MAGIC;
      }
    } catch (IOException e) {
      return false; // unreadable: not proven a store
    }
  }

  private static int crc(ByteBuffer buffer, int offset) {
    CRC32C crc = new CRC32C();
    crc.update(buffer.duplicate().position(offset).limit(offset + 12));
    return (int) crc.getValue();
  }

  /** Writes a new empty store's selector: generation 0, no data file yet. */
  private static void create(Path file) throws IOException {
    Path temp = sibling(file, ".new");
    Files.write(temp, ByteBuffer.allocate(2 * RECORD_BYTES).put(record(0)).array());
    try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    StoreFiles.forceDirectory(file.getParent());
  }
}
