package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.spi.AbstractCheckpointStore;
import io.datum.cdc.spi.StoreFiles;
import io.datum.cdc.spi.StoreLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.HTreeMap;
import org.mapdb.Serializer;

/**
 * A {@link CdcCheckpointStore} that keeps the checkpoints of every slot in one MapDB 3.1 file. URI:
 * {@code mapdb:/var/lib/app/cdc.mapdb}, see {@link Options} for the query parameters.
 */
public final class MapDbCheckpointStore extends AbstractCheckpointStore {

  /** The name of the MapDB map holding the checkpoints, slot name to encoded checkpoint. */
  public static final String MAP_NAME = "datum_cdc_checkpoints";

  /**
   * The options of a MapDB checkpoint store; immutable. In a URI: {@code
   * mapdb:/path/file.mapdb?transactions=true&mmap=false}.
   *
   * @param transactions true (default): MapDB's write-ahead log, see the class description; false:
   *     no log, not crash-safe, for throwaway state only
   * @param memoryMapped false (default) to read and write the file with {@code read}/{@code write}
   *     calls; true to map it into memory (if another program truncates a mapped file, the JVM dies
   *     with SIGBUS)
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
  private final DB db;
  private final HTreeMap<String, byte[]> map;

  /** Commits hold the write lock, reads the read lock: a read sees committed values only. */
  private final ReentrantReadWriteLock data = new ReentrantReadWriteLock();

  private MapDbCheckpointStore(
      Path file, Options options, StoreLock lock, DB db, HTreeMap<String, byte[]> map) {
    super("mapdb checkpoint store " + file, lock);
    this.file = file;
    this.options = options;
    this.db = db;
    this.map = map;
  }

  /**
   * Opens the store in {@code file} with the {@link Options#DEFAULTS default options}; see {@link
   * #open(Path, Options)}.
   *
   * @param file the MapDB file holding every slot's checkpoint
   * @return the open store; the caller closes it
   * @throws NullPointerException if {@code file} is null
   * @throws CdcConfigurationException if the path names no file (a root directory)
   * @throws CdcStoreException as {@link #open(Path, Options)}
   */
  public static MapDbCheckpointStore open(Path file) {
    return open(file, Options.DEFAULTS);
  }

  /**
   * Opens the store in {@code file}, creating missing parent directories and, if the file does not
   * exist, an empty store; locks it against other stores.
   *
   * @param file the MapDB file; a relative path is resolved against the working directory
   * @param options the options, not null
   * @return the open store; the caller closes it
   * @throws NullPointerException if an argument is null
   * @throws CdcConfigurationException if the path names no file (a root directory)
   * @throws CdcStoreException naming the file if it is in use by another process or store of this
   *     JVM, is a directory, is not a datum-cdc MapDB checkpoint file, is damaged, or cannot be
   *     created, read or locked
   */
  public static MapDbCheckpointStore open(Path file, Options options) {
    Objects.requireNonNull(options, "options");
    Path path = Objects.requireNonNull(file, "file").toAbsolutePath().normalize();
    if (path.getParent() == null) {
      throw new CdcConfigurationException(
          "mapdb checkpoint store path \"" + file + "\" names no file");
    }
    StoreFiles.createDirectories(path.getParent(), "mapdb checkpoint store");
    if (Files.isDirectory(path)) {
      throw new CdcStoreException(
          "mapdb checkpoint store " + path + " is a directory; name the MapDB file in it instead");
    }
    StoreLock lock =
        StoreLock.acquire(
            path.resolveSibling(path.getFileName() + ".lock"), "mapdb checkpoint store " + path);
    DB db = null;
    try {
      DBMaker.Maker maker = DBMaker.fileDB(path.toFile());
      if (options.transactions()) {
        maker = maker.transactionEnable();
      }
      if (options.memoryMapped()) {
        maker = maker.fileMmapEnableIfSupported().cleanerHackEnable();
      }
      db = maker.make();
      HTreeMap<String, byte[]> map =
          db.hashMap(MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY).createOrOpen();
      db.commit();
      return new MapDbCheckpointStore(path, options, lock, db, map);
    } catch (RuntimeException | AssertionError e) {
      CdcStoreException failure =
          e instanceof CdcStoreException c
              ? c
              : new CdcStoreException(
                  "cannot open mapdb checkpoint store " + path + ", damaged or not one: " + e, e);
      try {
        if (db != null) {
          db.close();
        }
      } catch (RuntimeException | AssertionError suppressed) {
        failure.addSuppressed(suppressed);
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
   * Returns the MapDB file this store keeps every slot in.
   *
   * @return the absolute path of the file
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
      return map.get(slot);
    } finally {
      data.readLock().unlock();
    }
  }

  @Override
  protected void write(Map<String, byte[]> batch) {
    data.writeLock().lock();
    try {
      map.putAll(batch);
      db.commit();
    } catch (RuntimeException | AssertionError e) {
      if (options.transactions()) {
        db.rollback();
      }
      throw e;
    } finally {
      data.writeLock().unlock();
    }
  }

  @Override
  protected List<String> list() {
    data.readLock().lock();
    try {
      return new ArrayList<>(map.keySet());
    } finally {
      data.readLock().unlock();
    }
  }

  @Override
  protected void release() {
    db.close();
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
}
