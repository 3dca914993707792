package io.datum.cdc.store.rocksdb;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.SlotNames;
import io.datum.cdc.spi.AbstractCheckpointStore;
import io.datum.cdc.spi.StoreFiles;
import io.datum.cdc.spi.StoreLock;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.rocksdb.FlushOptions;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Status;
import org.rocksdb.WALRecoveryMode;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * A {@link CdcCheckpointStore} that keeps the checkpoints of every slot in one RocksDB database, in
 * a directory it has to itself. URI: {@code rocksdb:/var/lib/app/cdc-rocks}, see {@link
 * io.datum.cdc.CheckpointStores}.
 *
 * <p><b>Layout.</b> The key is the slot name (ASCII, validated with {@link SlotNames#requireValid}
 * before any access); the value is the checkpoint in the binary form of {@link
 * io.datum.cdc.spi.CheckpointCodec} (magic number, format version, CRC32C). A value that does not
 * decode is reported by {@link #load} as a {@link CdcStoreException} naming the database directory
 * and the slot.
 *
 * <p><b>Durability.</b> {@link #store} goes through a {@link io.datum.cdc.spi.GroupCommit}:
 * checkpoints submitted concurrently by several threads are written together as one atomic {@link
 * WriteBatch}. With {@link Options#syncWrites()} {@code true} (the default) each batch is appended
 * to RocksDB's write-ahead log and the log is fsynced ({@code fdatasync}) before any of its callers
 * returns, so a returned {@code store} survives a process crash and a power loss. With {@code
 * false} the batch is written to the log (handed to the operating system) without an fsync: a
 * returned {@code store} survives a crash of the process, but the last stores before a power loss
 * or a kernel crash may be lost (the database then recovers to an older, consistent state). {@link
 * #close} flushes the memory table to a table file and fsyncs it, so what was stored before a clean
 * close is durable either way. A batch is atomic: after any crash each slot holds its previous or
 * its new checkpoint, never a mix.
 *
 * <p><b>Cost.</b> One batch costs one write-ahead-log append of a few dozen bytes per checkpoint
 * plus, with {@code syncWrites}, one fsync of the log: on a disk without a battery-backed cache the
 * fsync dominates (typically 0.1 to a few milliseconds); without it a batch costs a few
 * microseconds. A single caller pays one batch per {@code store}; {@code n} concurrent callers
 * share about one batch (so one fsync) per round. Reads ({@link #load}) come from RocksDB's memory
 * table or block cache and do not wait for writes. RocksDB keeps a memory table of up to 4 MiB and
 * a small info log ({@code LOG}, at most 5 files of 1 MiB) in the directory, and compacts old
 * checkpoint versions away in the background. Opening reads every table file once to verify its
 * checksums and replays the write-ahead log; closing writes one table file (a few milliseconds).
 *
 * <p><b>Integrity.</b> At open RocksDB's paranoid checks are on and the checksums of every table
 * file are verified, so a database whose {@code CURRENT}, {@code MANIFEST} or table ({@code *.sst})
 * files are damaged, or whose {@code CURRENT} file is missing next to data files, fails to open
 * with a {@link CdcStoreException} naming the directory, instead of opening empty. After a clean
 * {@link #close} every checkpoint is in checksummed table files. Checkpoints stored since the last
 * open or close live only in the write-ahead log until the next flush: with {@code syncWrites} the
 * log is replayed tolerating only an incomplete last record (a batch that was never acknowledged),
 * and damage before it fails the open rather than silently dropping acknowledged checkpoints; with
 * {@code syncWrites} off the log is replayed up to its first damaged record (point-in-time
 * recovery), as a power loss may leave unsynced garbage there. Opening with {@code syncWrites} a
 * database whose last writer ran without it and lost power can therefore fail; opening it once with
 * {@code syncWrites} off recovers it. Limitation: damage that makes the <em>first</em> record of
 * the newest log look like an incomplete write (the log overwritten, zeroed or deleted as a whole)
 * cannot be told apart from a crash during that write, so the checkpoints of that log, stored after
 * the last open and not yet flushed, are lost without an error.
 *
 * <p><b>Exclusivity.</b> The directory is locked through {@code <dir>/.lock} ({@link StoreLock}, an
 * OS lock released if the process dies) and RocksDB's own {@code LOCK} file: a second open of the
 * same directory, by this or another process, fails with a {@link CdcStoreException} until {@link
 * #close}.
 *
 * <p><b>Native library.</b> The first {@code open} in a JVM loads RocksDB's native library: unless
 * it is on {@code java.library.path}, rocksdbjni copies it (about 15 MB) into {@code
 * java.io.tmpdir} and deletes the copy at a normal JVM exit only, so every killed JVM leaves one
 * behind (rocksdbjni behaviour, facebook/rocksdb#13185).
 *
 * <p>Safe for concurrent use by several threads.
 */
public final class RocksDbCheckpointStore extends AbstractCheckpointStore {

  /**
   * How a {@link RocksDbCheckpointStore} writes. Immutable.
   *
   * @param syncWrites {@code true} (the default): every batch of stores is fsynced in the
   *     write-ahead log before {@link RocksDbCheckpointStore#store} returns, so a stored checkpoint
   *     survives a power loss; {@code false}: batches reach the operating system but are not
   *     fsynced, so a stored checkpoint survives a crash of the process only (much cheaper per
   *     store). URI parameter {@code sync=true|false}.
   */
  public record Options(boolean syncWrites) {

    private static final Options DEFAULTS = new Options(true);

    /**
     * Returns the default, durable options: {@code syncWrites} true.
     *
     * @return the defaults
     */
    public static Options defaults() {
      return DEFAULTS;
    }

    /**
     * Returns these options with {@code syncWrites} replaced.
     *
     * @param syncWrites see {@link #syncWrites()}
     * @return the changed options
     */
    public Options withSyncWrites(boolean syncWrites) {
      return new Options(syncWrites);
    }
  }

  /** The info log ({@code LOG}) keeps at most this many old files. */
  private static final long INFO_LOG_FILES = 4;

  private static final long INFO_LOG_FILE_BYTES = 1 << 20;
  private static final long WRITE_BUFFER_BYTES = 4 << 20;

  /** RocksDB's write-ahead log, table and blob files. */
  private static final Pattern DATA_FILE = Pattern.compile("[0-9]+\\.(log|sst|blob)");

  private static boolean libraryLoaded; // guarded by RocksDbCheckpointStore.class

  private final Path directory;
  private final Options options;
  private final org.rocksdb.Options dbOptions;
  private final WriteOptions writeOptions;
  private final RocksDB db;

  private RocksDbCheckpointStore(
      Path directory,
      Options options,
      StoreLock lock,
      org.rocksdb.Options dbOptions,
      WriteOptions writeOptions,
      RocksDB db) {
    super("rocksdb checkpoint store " + directory, lock);
    this.directory = directory;
    this.options = options;
    this.dbOptions = dbOptions;
    this.writeOptions = writeOptions;
    this.db = db;
  }

  /**
   * Opens the store in {@code directory} with the {@linkplain Options#defaults() default, durable
   * options}; see {@link #open(Path, Options)}.
   *
   * @param directory the database directory
   * @return the open store; the caller closes it
   * @throws NullPointerException if {@code directory} is null
   * @throws CdcStoreException as {@link #open(Path, Options)}
   */
  public static RocksDbCheckpointStore open(Path directory) {
    return open(directory, Options.defaults());
  }

  /**
   * Opens the store in {@code directory}: creates the directory (and missing parents, fsyncing each
   * new entry's parent) and an empty database if there is none, or opens and recovers the existing
   * database, verifying the checksums of its files. Loads RocksDB's native library on first use.
   *
   * @param directory the database directory, used by nothing else; a relative path is resolved
   *     against the working directory
   * @param options how to write, see {@link Options}
   * @return the open store; the caller closes it
   * @throws NullPointerException if an argument is null
   * @throws CdcStoreException naming the directory if it is in use by another process or another
   *     open store ({@code "... is in use by another process or store: ..."}), exists but is not a
   *     directory, cannot be created, holds a database RocksDB reports as corrupt (damaged {@code
   *     CURRENT}, {@code MANIFEST}, table or log files, or data files without a {@code CURRENT}
   *     file), cannot be read, or if the native library cannot be loaded
   */
  public static RocksDbCheckpointStore open(Path directory, Options options) {
    return open(directory, options, true);
  }

  /**
   * Opens the store at {@code directory} like {@link #open(Path, Options)}; with {@code create}
   * false only a directory that holds a RocksDB database ({@code CURRENT}) is opened, and nothing
   * is created or written in any other (for commands that only read, such as {@code pgcdc
   * checkpoint show}).
   *
   * @param directory the store's directory, not null
   * @param options the options, not null
   * @param create whether a missing store is created
   * @return the open store
   * @throws CdcStoreException as {@link #open(Path, Options)}, or with {@code create} false if the
   *     directory holds no RocksDB database (nothing was touched)
   */
  public static RocksDbCheckpointStore open(Path directory, Options options, boolean create) {
    if (!create && !Files.isRegularFile(directory.resolve("CURRENT"))) {
      throw new CdcStoreException(
          "rocksdb checkpoint store "
              + directory
              + ": no store there (no RocksDB CURRENT file); nothing was read or written");
    }
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(options, "options");
    Path dir = directory.toAbsolutePath().normalize();
    StoreFiles.createDirectories(dir, "rocksdb checkpoint store");
    loadLibrary(dir);
    StoreLock lock = StoreLock.acquire(dir.resolve(".lock"), "rocksdb checkpoint store " + dir);
    org.rocksdb.Options dbOptions = null;
    WriteOptions writeOptions = null;
    RocksDB db = null;
    try {
      Path real = dir.toRealPath();
      refuseDataWithoutCurrent(dir, real);
      dbOptions = dbOptions(options);
      writeOptions = new WriteOptions().setSync(options.syncWrites());
      db = RocksDB.open(dbOptions, real.toString());
      db.verifyChecksum();
      return new RocksDbCheckpointStore(dir, options, lock, dbOptions, writeOptions, db);
    } catch (RocksDBException | IOException | RuntimeException | Error e) {
      CdcStoreException failure =
          e instanceof RocksDBException r
              ? openFailure(dir, r)
              : e instanceof CdcStoreException c
                  ? c
                  : new CdcStoreException(
                      "cannot open rocksdb checkpoint store " + dir + ": " + e, e);
      if (db != null) {
        db.close();
      }
      if (writeOptions != null) {
        writeOptions.close();
      }
      if (dbOptions != null) {
        dbOptions.close();
      }
      try {
        lock.release();
      } catch (IOException suppressed) {
        failure.addSuppressed(suppressed);
      }
      throw failure;
    }
  }

  /**
   * Returns the database directory.
   *
   * @return the absolute, normalised directory path this store was opened with
   */
  public Path directory() {
    return directory;
  }

  /**
   * Returns the options this store was opened with.
   *
   * @return the options
   */
  public Options options() {
    return options;
  }

  /** Reads from the memory table or block cache; does not wait for a batch being written. */
  @Override
  protected byte[] read(String slot) throws RocksDBException {
    return db.get(key(slot));
  }

  /** Writes the batch as one atomic {@link WriteBatch}, fsynced with {@code syncWrites}. */
  @Override
  protected void write(Map<String, byte[]> batch) throws RocksDBException {
    try (WriteBatch writes = new WriteBatch()) {
      for (Map.Entry<String, byte[]> entry : batch.entrySet()) {
        writes.put(key(entry.getKey()), entry.getValue());
      }
      db.write(writeOptions, writes);
    } catch (RocksDBException e) {
      throw new CdcStoreException(
          "rocksdb checkpoint store "
              + directory
              + " failed to write"
              + (options.syncWrites() ? " and sync" : "")
              + " the checkpoints of slots "
              + batch.keySet()
              + "; their previous checkpoints may still be the stored ones: "
              + describe(e),
          e);
    }
  }

  /** Lists every key of the database that is a valid slot name. */
  @Override
  protected List<String> list() {
    List<String> slots = new ArrayList<>();
    try (RocksIterator keys = db.newIterator()) {
      for (keys.seekToFirst(); keys.isValid(); keys.next()) {
        String slot = new String(keys.key(), StandardCharsets.US_ASCII);
        if (SlotNames.isValid(slot)) {
          slots.add(slot);
        }
      }
    }
    return slots;
  }

  /**
   * Flushes the memory table to a table file (fsynced, so also with {@link Options#syncWrites()}
   * off everything stored so far is durable), closes the database and frees its native memory.
   */
  @Override
  protected void release() throws RocksDBException {
    RocksDBException failure = null;
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    } catch (RocksDBException e) {
      failure = e;
    }
    try {
      db.closeE();
    } catch (RocksDBException e) {
      if (failure == null) {
        failure = e;
      } else {
        failure.addSuppressed(e);
      }
    } finally {
      db.close(); // frees the native handle if closeE failed; no-op otherwise
      writeOptions.close();
      dbOptions.close();
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Returns this store's URI, such as {@code rocksdb:/var/lib/app/cdc-rocks?sync=true}; opening it
   * with {@link io.datum.cdc.CheckpointStores#open(String)} opens this database again with the same
   * options.
   *
   * @return the directory and options as a {@code rocksdb:} URI
   */
  @Override
  public String location() {
    return uri(directory, options);
  }

  /**
   * Returns the {@code rocksdb:} URI of a directory and options.
   *
   * @param directory an absolute directory
   * @param options the options
   * @return a URI such as {@code rocksdb:/var/lib/app/cdc-rocks?sync=true}, with characters a URI
   *     cannot hold escaped
   */
  static String uri(Path directory, Options options) {
    String path = directory.toUri().getPath();
    if (path.length() > 1 && path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    try {
      return new URI("rocksdb", null, path, "sync=" + options.syncWrites(), null).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot build the URI of " + directory, e);
    }
  }

  private static byte[] key(String validSlot) {
    return validSlot.getBytes(StandardCharsets.US_ASCII);
  }

  private static org.rocksdb.Options dbOptions(Options options) {
    org.rocksdb.Options db = new org.rocksdb.Options();
    try {
      return db.setCreateIfMissing(true)
          .setParanoidChecks(true)
          .setParanoidFileChecks(true)
          .setWalRecoveryMode(
              options.syncWrites()
                  ? WALRecoveryMode.TolerateCorruptedTailRecords
                  : WALRecoveryMode.PointInTimeRecovery)
          .setWriteBufferSize(WRITE_BUFFER_BYTES)
          .setKeepLogFileNum(INFO_LOG_FILES)
          .setMaxLogFileSize(INFO_LOG_FILE_BYTES)
          .setInfoLogLevel(InfoLogLevel.INFO_LEVEL);
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  /**
   * With {@code create_if_missing}, RocksDB creates a fresh, empty database where {@code CURRENT}
   * is missing, even next to the log and table files of an existing one: refuse that.
   */
  private static void refuseDataWithoutCurrent(Path dir, Path real) {
    if (Files.exists(real.resolve("CURRENT"), LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    List<String> data;
    try (Stream<Path> entries = Files.list(real)) {
      data =
          entries
              .map(p -> p.getFileName().toString())
              .filter(name -> DATA_FILE.matcher(name).matches())
              .sorted()
              .limit(5)
              .collect(Collectors.toList());
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot list rocksdb checkpoint store directory " + dir + ": " + e, e);
    }
    if (!data.isEmpty()) {
      throw new CdcStoreException(
          "rocksdb checkpoint store "
              + dir
              + " is corrupt: it holds RocksDB data files ("
              + String.join(", ", data)
              + ") but no CURRENT file, so the database cannot be opened; refusing to create an empty one"
              + " over it");
    }
  }

  private static CdcStoreException openFailure(Path dir, RocksDBException e) {
    String message = describe(e);
    Status status = e.getStatus();
    Status.Code code = status == null ? null : status.getCode();
    String text = String.valueOf(e.getMessage());
    if (code == Status.Code.IOError
        && (text.contains("lock hold by current process")
            || text.contains("While lock file")
            || text.contains("/LOCK:")
            || text.contains(File.separator + "LOCK:"))) {
      return new CdcStoreException(
          "rocksdb checkpoint store " + dir + " is in use by another process or store: " + message,
          e);
    }
    if (code == Status.Code.Corruption) {
      return new CdcStoreException(
          "rocksdb checkpoint store " + dir + " is corrupt and cannot be opened: " + message, e);
    }
    return new CdcStoreException("cannot open rocksdb checkpoint store " + dir + ": " + message, e);
  }

  private static String describe(RocksDBException e) {
    Status status = e.getStatus();
    String message = String.valueOf(e.getMessage());
    if (status == null || status.getCode() == null || status.getCode() == Status.Code.Ok) {
      return message;
    }
    return status.getCode() + ": " + message;
  }

  private static synchronized void loadLibrary(Path dir) {
    if (libraryLoaded) {
      return;
    }
    try {
      RocksDB.loadLibrary();
    } catch (RuntimeException | LinkageError e) {
      throw new CdcStoreException(
          "cannot open rocksdb checkpoint store "
              + dir
              + ": the RocksDB native library (rocksdbjni) does"
              + " not load on this platform ("
              + System.getProperty("os.name")
              + ' '
              + System.getProperty("os.arch")
              + "): "
              + e,
          e);
    }
    libraryLoaded = true;
  }
}
