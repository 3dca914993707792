package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.SlotNames;
import io.datum.cdc.spi.GroupCommit;
import io.datum.cdc.spi.StoreFiles;
import io.datum.cdc.store.mapdb.PagedVolume.CommitHooks;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Pattern;
import org.mapdb.Atomic;
import org.mapdb.DB;
import org.mapdb.DBException;
import org.mapdb.DBMaker;
import org.mapdb.HTreeMap;
import org.mapdb.Serializer;
import org.mapdb.volume.MappedFileVol;
import org.mapdb.volume.RandomAccessFileVol;
import org.mapdb.volume.Volume;

/**
 * A {@link CdcCheckpointStore} that keeps the checkpoints of every slot in one MapDB 3.1 file. URI:
 * {@code mapdb:/var/lib/app/cdc.mapdb}, see {@link Options} for the query parameters.
 *
 * <p><b>Layout.</b> The file holds a MapDB {@code HTreeMap} named {@value #MAP_NAME} from slot name
 * to a compact binary checkpoint (format byte, slot, watermark, each partial transaction's end LSN,
 * event count and acknowledged index ranges, CRC32C; a bare watermark takes 15 bytes plus the slot
 * name), and a manifest listing the slots (so a damaged map that lost a slot is reported, never
 * read as empty). Next to it live {@code <file>.lock} (the process lock, holds the owner's pid; it
 * stays after close) and, while the store is open with transactions and after a crash, {@code
 * <file>.redo} (the redo log). Copy, move or back up the file only while no store has it open;
 * never separate a {@code .redo} file from its data file.
 *
 * <p><b>Durability.</b> With the default options ({@code transactions=true}), when {@link #store}
 * returns, the checkpoint is on stable storage and survives a process crash and a power loss
 * (assuming the disk honours fsync): every batch of checkpoints is committed by writing the changed
 * 4 KiB pages of the MapDB file to the redo log and fsyncing it, then writing them into the file
 * and fsyncing it. A crash at any moment leaves either the previous or the new state of every slot
 * of the batch; the next {@link #open} completes an interrupted commit from the redo log. A batch
 * costs two fsyncs, a redo record of its dirty pages (typically 3 to 6 pages for one to a few
 * slots) and as many 4 KiB page writes.
 *
 * <p>MapDB 3.1.0's own write-ahead log ({@code DBMaker.transactionEnable()}) is deliberately not
 * used: its {@code commit()} does fsync the log and then the file, but updates the file in place in
 * between and nothing in MapDB 3.1.0 ever replays the log, so a process killed during that update
 * leaves a file MapDB cannot read (reproduced by killing the process at each of those writes). This
 * store instead runs MapDB without its transactions on a page-caching volume whose {@code sync()}
 * is the atomic commit above. With {@code transactions=false} the pages go straight into the file:
 * one fsync per batch, but a crash during the page writes can leave the file torn, so that it
 * cannot be opened again, or returns a checkpoint older than the last one whose store returned. The
 * per-value CRC32C makes sure a torn value is reported, never returned.
 *
 * <p><b>Size.</b> MapDB starts the file at 2 MiB (sparse) and, for ordinary checkpoints (a few
 * partial transactions), reuses its space: 100 000 stores over 8 slots leave it at 2 MiB. Values of
 * tens of kilobytes whose size changes on every store make MapDB's allocator grow the file (by
 * about 10 MiB per thousand such stores). The store caches the pages it reads and writes, at most 8
 * MiB after a commit.
 *
 * <p><b>Concurrency.</b> Concurrent {@link #store} calls share one commit ({@link GroupCommit}):
 * the first caller commits every checkpoint submitted while the previous commit ran, so with {@code
 * n} threads a batch costs the same two fsyncs as one store. A {@link #load} waits while a batch is
 * being committed, so it never sees a checkpoint that is not yet durable. Safe for use by several
 * threads.
 *
 * <p><b>Exclusivity.</b> A store holds the file exclusively until {@link #close}: through an OS
 * lock on {@code <file>.lock} (released by the OS if the process dies), through MapDB's own lock on
 * the file, and against other stores of this JVM. A second open, from this JVM or another process,
 * fails with {@link CdcStoreException} {@code "mapdb checkpoint store <file> is in use by another
 * process or store: ..."}.
 *
 * <p><b>Failures.</b> A file that is not a datum-cdc MapDB checkpoint file, damaged, truncated or
 * unreadable makes {@link #open} or {@link #load} throw {@link CdcStoreException} naming the file
 * (and the slot); MapDB's own exceptions never escape. After a failed {@link #store} the store
 * refuses further stores; close it and open it again, which repairs the file from the redo log.
 */
public final class MapDbCheckpointStore implements CdcCheckpointStore {

  /** The name of the MapDB map holding the checkpoints, slot name to encoded checkpoint. */
  public static final String MAP_NAME = "datum_cdc_checkpoints";

  /**
   * The name of the MapDB variable holding the manifest: the sorted list of slots with a
   * checkpoint, with a CRC32C. It is updated in the same commit as the map whenever a slot is
   * added, and checked against the map's keys on open, so a damaged map that lost a slot is
   * reported instead of loading as empty.
   */
  static final String SLOTS_NAME = "datum_cdc_slots";

  /** The name of the MapDB atomic integer holding the layout version, {@value #LAYOUT}. */
  static final String LAYOUT_NAME = "datum_cdc_layout";

  /** The layout version this class writes and reads. */
  static final int LAYOUT = 1;

  private static final String CREATING_SUFFIX = ".creating";

  /**
   * The options of a MapDB checkpoint store; immutable. {@link #DEFAULTS} is the durable
   * configuration. In a URI: {@code mapdb:/path/file.mapdb?transactions=true&mmap=false}.
   *
   * <table>
   *   <caption>What each combination survives</caption>
   *   <tr><th>transactions</th><th>memoryMapped</th><th>process crash</th><th>power loss</th>
   *       <th>syncs per batch</th></tr>
   *   <tr><td>true (default)</td><td>false (default)</td><td>yes</td><td>yes</td><td>2</td></tr>
   *   <tr><td>true</td><td>true</td><td>yes</td><td>yes</td><td>2 (fsync + msync)</td></tr>
   *   <tr><td>false</td><td>either</td><td><b>no</b>: may leave the file unreadable</td>
   *       <td><b>no</b></td><td>1</td></tr>
   * </table>
   *
   * @param transactions true (default) to commit every batch through the store's redo log,
   *     crash-safe; false to write pages straight into the file, <b>not crash-safe</b>: a crash or
   *     power loss during a store can leave the file unreadable (all slots lost) or with an older
   *     checkpoint than the last one whose store returned. Only for throwaway state.
   * @param memoryMapped false (default) to read and write the file with {@code read}/{@code write}
   *     calls; true to map it into memory (MapDB's {@code MappedFileVol}, synced with {@code
   *     msync}, unmapped on close). The store caches the pages it reads either way, so mapping
   *     saves nothing measurable; if another program truncates a mapped file, the JVM dies with
   *     SIGBUS; and an interrupt of a storing thread while the file grows (mapping goes through an
   *     interruptible {@code FileChannel}) fails that commit.
   */
  public record Options(boolean transactions, boolean memoryMapped) {

    /** Transactions on, no memory mapping: crash-safe. */
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
  private final StoreLock storeLock;
  private final Volume fileVolume;
  private final PagedVolume volume;
  private final RedoLog redo;
  private final DB db;
  private final HTreeMap<String, byte[]> map;
  private final Atomic.Var<byte[]> slotsVar;
  private final GroupCommit groupCommit;

  /** Stores and loads hold the read lock, close the write lock: close waits for them. */
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

  /** Batch commits hold the write lock, loads the read lock: loads see only committed state. */
  private final ReentrantReadWriteLock data = new ReentrantReadWriteLock();

  private boolean closed; // guarded by lifecycle
  private volatile CdcStoreException broken;

  /**
   * The committed manifest; replaced (under the data write lock) after each commit adding a slot.
   */
  private volatile SortedSet<String> slots;

  private MapDbCheckpointStore(
      Path file,
      Options options,
      StoreLock storeLock,
      Volume fileVolume,
      PagedVolume volume,
      RedoLog redo,
      DB db,
      HTreeMap<String, byte[]> map,
      Atomic.Var<byte[]> slotsVar,
      SortedSet<String> slots) {
    this.file = file;
    this.options = options;
    this.storeLock = storeLock;
    this.fileVolume = fileVolume;
    this.volume = volume;
    this.redo = redo;
    this.db = db;
    this.map = map;
    this.slotsVar = slotsVar;
    this.slots = slots;
    this.groupCommit = new GroupCommit(location(), this::commit);
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
   * Opens the store in {@code file}: creates missing parent directories (fsyncing each new entry's
   * parent) and, if the file does not exist, a new empty store (written completely under a
   * temporary name, fsynced and renamed into place, so a crash never leaves a half-created file);
   * locks it; completes a commit a crash interrupted, from {@code <file>.redo}.
   *
   * @param file the MapDB file holding every slot's checkpoint; a relative path is resolved against
   *     the working directory, a symbolic link is followed
   * @param options the options, not null
   * @return the open store; the caller closes it
   * @throws NullPointerException if an argument is null
   * @throws CdcConfigurationException if the path names no file (a root directory)
   * @throws CdcStoreException naming the file if it is in use by another process or store of this
   *     JVM ({@code "mapdb checkpoint store <file> is in use by another process or store: ..."}),
   *     is a directory, is not a datum-cdc MapDB checkpoint file, is damaged, or cannot be created,
   *     read or locked
   */
  public static MapDbCheckpointStore open(Path file, Options options) {
    return open(file, options, CommitHooks.NONE);
  }

  /**
   * As {@link #open(Path, Options)}, with crash points for tests.
   *
   * @param file the MapDB file
   * @param options the options
   * @param hooks called at each step of every commit
   * @return the open store
   */
  static MapDbCheckpointStore open(Path file, Options options, CommitHooks hooks) {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(options, "options");
    Path absolute = file.toAbsolutePath().normalize();
    if (absolute.getFileName() == null || absolute.getParent() == null) {
      throw new CdcConfigurationException(
          "mapdb checkpoint store path \"" + file + "\" names no file");
    }
    StoreFiles.createDirectories(absolute.getParent(), "mapdb checkpoint store");
    Path real = realPath(absolute);
    if (Files.isDirectory(real)) {
      throw new CdcStoreException(
          "mapdb checkpoint store "
              + real
              + " is a directory; name the MapDB file in it instead,"
              + " such as "
              + real.resolve("checkpoints.mapdb"));
    }
    StoreLock lock = StoreLock.acquire(real);
    try {
      return openLocked(real, options, lock, hooks);
    } catch (RuntimeException | Error e) {
      try {
        lock.release();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private static Path realPath(Path absolute) {
    try {
      if (Files.exists(absolute)) {
        return absolute.toRealPath();
      }
      return absolute.getParent().toRealPath().resolve(absolute.getFileName());
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot resolve mapdb checkpoint store path " + absolute + ": " + e, e);
    }
  }

  private static MapDbCheckpointStore openLocked(
      Path file, Options options, StoreLock lock, CommitHooks hooks) {
    deleteCreationLeftovers(file);
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      create(file);
    }
    Volume fileVolume = openFileVolume(file, options.memoryMapped());
    RedoLog redo = null;
    DB db = null;
    try {
      Path redoPath = RedoLog.pathOf(file);
      RedoLog.Record record;
      try {
        record = RedoLog.read(redoPath);
      } catch (IOException e) {
        throw new CdcStoreException(
            "cannot read redo log " + redoPath + " of mapdb checkpoint store " + file + ": " + e,
            e);
      }
      if (record != null) {
        try {
          PagedVolume.replay(fileVolume, record);
        } catch (RuntimeException e) {
          throw new CdcStoreException(
              "cannot complete the interrupted commit of mapdb checkpoint store "
                  + file
                  + " from "
                  + redoPath
                  + ": "
                  + e,
              e);
        }
      }
      if (fileVolume.length() == 0) {
        throw new CdcStoreException(
            "corrupt mapdb checkpoint store "
                + file
                + ": the file is empty (0 bytes); this store creates its files completely before naming them");
      }
      try {
        if (options.transactions()) {
          redo = RedoLog.open(redoPath);
        } else {
          // a redo record left by an earlier open with transactions must not outlive the commits
          // now made without it; the directory sync also persists an earlier close's deletion
          Files.deleteIfExists(redoPath);
          StoreFiles.forceDirectory(file.getParent());
        }
      } catch (IOException e) {
        throw new CdcStoreException(
            "cannot open redo log " + redoPath + " of mapdb checkpoint store " + file + ": " + e,
            e);
      }
      PagedVolume volume = new PagedVolume(fileVolume, redo, hooks);
      HTreeMap<String, byte[]> map;
      Atomic.Var<byte[]> slotsVar;
      SortedSet<String> slots;
      try {
        db = DBMaker.volumeDB(volume, true).make();
        if (!db.exists(MAP_NAME)) {
          List<String> names = new ArrayList<>();
          db.getAllNames().forEach(names::add);
          throw new CdcStoreException(
              "mapdb checkpoint store "
                  + file
                  + " is a MapDB file, but not a datum-cdc"
                  + " checkpoint store: it has no map "
                  + MAP_NAME
                  + " (it holds "
                  + names
                  + ")");
        }
        int layout = db.atomicInteger(LAYOUT_NAME).open().get();
        if (layout != LAYOUT) {
          throw new CdcStoreException(
              "mapdb checkpoint store "
                  + file
                  + " has layout version "
                  + layout
                  + "; this version of datum-cdc reads layout "
                  + LAYOUT);
        }
        map = db.hashMap(MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY).open();
        if (!db.exists(SLOTS_NAME)) {
          throw new CdcStoreException(
              "corrupt mapdb checkpoint store "
                  + file
                  + ": its list of slots "
                  + SLOTS_NAME
                  + " is missing");
        }
        slotsVar = db.atomicVar(SLOTS_NAME, Serializer.BYTE_ARRAY).open();
        slots = CheckpointCodec.decodeSlots(slotsVar.get(), file);
        TreeSet<String> keys = new TreeSet<>(map.keySet());
        if (!keys.equals(slots)) {
          throw new CdcStoreException(
              "corrupt mapdb checkpoint store "
                  + file
                  + ": its list of slots names "
                  + slots
                  + ", but its map holds checkpoints of "
                  + keys);
        }
      } catch (RuntimeException | AssertionError e) {
        if (e instanceof CdcStoreException) {
          throw (CdcStoreException) e;
        }
        throw new CdcStoreException(
            "corrupt mapdb checkpoint store "
                + file
                + ": MapDB cannot open it, the file is damaged or"
                + " not a MapDB file ("
                + e
                + ")",
            e);
      }
      return new MapDbCheckpointStore(
          file, options, lock, fileVolume, volume, redo, db, map, slotsVar, slots);
    } catch (RuntimeException | Error e) {
      closeQuietly(db, fileVolume, redo, e);
      throw e;
    }
  }

  private static Volume openFileVolume(Path file, boolean memoryMapped) {
    try {
      if (memoryMapped) {
        // 1 MiB slices (MapDB's default); the cleaner hack unmaps on close instead of at GC
        return new MappedFileVol(file.toFile(), false, 0L, 20, true, 0L, false);
      }
      return new RandomAccessFileVol(file.toFile(), false, 0L, 0L);
    } catch (DBException.FileLocked e) {
      throw StoreLock.inUse(
          file, "a process holds MapDB's lock on the file (" + e.getMessage() + ")", e);
    } catch (RuntimeException e) {
      throw new CdcStoreException("cannot open mapdb checkpoint store " + file + ": " + e, e);
    }
  }

  /** Writes a new empty store under a temporary name, syncs it and renames it into place. */
  private static void create(Path file) {
    Path temp =
        file.resolveSibling(
            file.getFileName()
                + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong())
                + CREATING_SUFFIX);
    try {
      Volume fileVolume = new RandomAccessFileVol(temp.toFile(), false, 0L, 0L);
      DB db = null;
      try {
        db = DBMaker.volumeDB(new PagedVolume(fileVolume, null, CommitHooks.NONE), false).make();
        db.hashMap(MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY).create();
        db.atomicInteger(LAYOUT_NAME, LAYOUT).create();
        db.atomicVar(
                SLOTS_NAME, Serializer.BYTE_ARRAY, CheckpointCodec.encodeSlots(new TreeSet<>()))
            .create();
        db.commit(); // writes the pages and fsyncs the temporary file
      } finally {
        if (db != null) {
          db.close();
        }
        fileVolume.close();
      }
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
      StoreFiles.forceDirectory(file.getParent());
    } catch (IOException | RuntimeException | AssertionError e) {
      try {
        Files.deleteIfExists(temp);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new CdcStoreException("cannot create mapdb checkpoint store " + file + ": " + e, e);
    }
  }

  /** Deletes temporary files of creations a crash interrupted; called holding the lock. */
  private static void deleteCreationLeftovers(Path file) {
    Pattern name =
        Pattern.compile(
            Pattern.quote(file.getFileName().toString())
                + "\\.[0-9a-f]{1,16}"
                + Pattern.quote(CREATING_SUFFIX));
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(file.getParent())) {
      for (Path entry : entries) {
        if (name.matcher(entry.getFileName().toString()).matches()) {
          Files.deleteIfExists(entry);
        }
      }
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot clean up after an interrupted creation of mapdb checkpoint store "
              + file
              + ": "
              + e,
          e);
    }
  }

  private static void closeQuietly(DB db, Volume fileVolume, RedoLog redo, Throwable failure) {
    try {
      if (db != null) {
        db.close(); // closes the paged volume and with it the file volume
      }
    } catch (RuntimeException | AssertionError e) {
      failure.addSuppressed(e);
    }
    try {
      fileVolume.close(); // idempotent
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
    if (redo != null) {
      try {
        redo.close();
      } catch (IOException e) {
        failure.addSuppressed(e);
      }
    }
  }

  // ---------------------------------------------------------------------------------- API

  /**
   * Returns the MapDB file this store keeps every slot in.
   *
   * @return the absolute real path of the file
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

  /**
   * Returns the checkpoint stored for {@code slot}, as of the last committed batch.
   *
   * @param slot a valid slot name; checked before the file is touched
   * @return the checkpoint, or empty if none was stored for the slot
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws CdcStoreException naming the file and the slot if the stored value or the file is
   *     corrupt or cannot be read
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    SlotNames.requireValid(slot);
    ReentrantReadWriteLock.ReadLock open = lifecycle.readLock();
    open.lock();
    try {
      ensureOpen();
      byte[] value;
      data.readLock().lock();
      try {
        value = map.get(slot);
      } catch (RuntimeException | AssertionError e) {
        throw new CdcStoreException(
            "cannot read the checkpoint of slot \""
                + slot
                + "\" from mapdb checkpoint store "
                + file
                + ": "
                + e,
            e);
      } finally {
        data.readLock().unlock();
      }
      if (value == null) {
        if (slots.contains(slot)) {
          throw new CdcStoreException(
              "corrupt mapdb checkpoint store "
                  + file
                  + ": its list of slots names \""
                  + slot
                  + "\", but its map has no checkpoint for it");
        }
        return Optional.empty();
      }
      return Optional.of(CheckpointCodec.decode(value, slot, file));
    } finally {
      open.unlock();
    }
  }

  /**
   * Replaces the checkpoint of {@code checkpoint.slot()}; durable when this method returns, as far
   * as the {@link Options} promise (see the class description). Concurrent calls share one commit.
   *
   * @param checkpoint the checkpoint, not null
   * @throws NullPointerException if {@code checkpoint} is null
   * @throws CdcStoreException naming the file if the commit failed; a later load returns the
   *     previous checkpoint or this one. The store then refuses further stores until reopened
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public void store(CdcCheckpoint checkpoint) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    SlotNames.requireValid(checkpoint.slot());
    ReentrantReadWriteLock.ReadLock open = lifecycle.readLock();
    open.lock();
    try {
      ensureOpen();
      groupCommit.store(checkpoint);
    } finally {
      open.unlock();
    }
  }

  /** Writes one batch and commits it; called by the group commit's leader. */
  private void commit(Collection<CdcCheckpoint> batch) {
    data.writeLock().lock();
    try {
      CdcStoreException earlier = broken;
      if (earlier != null) {
        throw new CdcStoreException(
            "mapdb checkpoint store "
                + file
                + " refuses stores after an earlier"
                + " commit failed; close it and open it again (which repairs it): "
                + earlier.getMessage(),
            earlier);
      }
      try {
        TreeSet<String> added = null;
        for (CdcCheckpoint c : batch) {
          map.put(c.slot(), CheckpointCodec.encode(c));
          if (!slots.contains(c.slot())) {
            added = added == null ? new TreeSet<>(slots) : added;
            added.add(c.slot());
          }
        }
        if (added != null) {
          slotsVar.set(CheckpointCodec.encodeSlots(added));
        }
        db.commit();
        if (added != null) {
          slots = Collections.unmodifiableSortedSet(added);
        }
      } catch (RuntimeException | AssertionError e) {
        List<String> slots = new ArrayList<>();
        batch.forEach(c -> slots.add(c.slot()));
        CdcStoreException failure =
            new CdcStoreException(
                "mapdb checkpoint store "
                    + file
                    + " failed to commit the checkpoints of slots "
                    + slots
                    + ": "
                    + e,
                e);
        broken = failure;
        throw failure;
      }
    } finally {
      data.writeLock().unlock();
    }
  }

  /**
   * Lists the slots with a stored checkpoint, from the store's manifest (checked against the map
   * when the store was opened).
   *
   * @return the slot names, sorted; an unmodifiable snapshot
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public SortedSet<String> slots() {
    ReentrantReadWriteLock.ReadLock open = lifecycle.readLock();
    open.lock();
    try {
      ensureOpen();
      return slots;
    } finally {
      open.unlock();
    }
  }

  /**
   * Returns the URI of this store, such as {@code mapdb:/var/lib/app/cdc.mapdb}, with the query
   * parameters of options that differ from the defaults; {@link
   * io.datum.cdc.CheckpointStores#open(String)} opens the same store with it.
   *
   * @return the store's URI
   */
  @Override
  public String location() {
    List<String> query = new ArrayList<>();
    if (options.transactions() != Options.DEFAULTS.transactions()) {
      query.add("transactions=" + options.transactions());
    }
    if (options.memoryMapped() != Options.DEFAULTS.memoryMapped()) {
      query.add("mmap=" + options.memoryMapped());
    }
    return "mapdb:"
        + file.toUri().getRawPath()
        + (query.isEmpty() ? "" : "?" + String.join("&", query));
  }

  /**
   * Waits for stores in progress, then closes the MapDB file without committing anything (every
   * returned store was already committed), deletes the redo log (all its pages are in the file;
   * kept if a commit failed, so that the next open repairs the file) and releases the locks.
   * Idempotent; afterwards {@link #store} and {@link #load} throw {@link IllegalStateException} and
   * another store may open the file.
   *
   * @throws CdcStoreException naming the file if releasing failed
   */
  @Override
  public void close() {
    ReentrantReadWriteLock.WriteLock exclusive = lifecycle.writeLock();
    exclusive.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      CdcStoreException failure = null;
      try {
        db.close(); // MapDB's close writes its header into the paged volume, which drops it
      } catch (RuntimeException | AssertionError e) {
        failure =
            new CdcStoreException("cannot close mapdb checkpoint store " + file + ": " + e, e);
      }
      try {
        fileVolume.close(); // idempotent; releases MapDB's lock if the close above failed early
      } catch (RuntimeException e) {
        failure = add(failure, e);
      }
      if (redo != null) {
        try {
          redo.close();
          if (broken == null && failure == null) {
            Files.deleteIfExists(redo.path());
            StoreFiles.forceDirectory(file.getParent());
          }
        } catch (IOException e) {
          failure = add(failure, e);
        }
      }
      try {
        storeLock.release();
      } catch (IOException e) {
        failure = add(failure, e);
      }
      if (failure != null) {
        throw failure;
      }
    } finally {
      exclusive.unlock();
    }
  }

  private CdcStoreException add(CdcStoreException failure, Exception e) {
    if (failure == null) {
      return new CdcStoreException("cannot close mapdb checkpoint store " + file + ": " + e, e);
    }
    failure.addSuppressed(e);
    return failure;
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("mapdb checkpoint store " + file + " is closed");
    }
  }

  /** Returns the group commit, for tests (its batch count). */
  GroupCommit groupCommit() {
    return groupCommit;
  }

  /** Returns the paged volume, for tests (its commit count). */
  PagedVolume volume() {
    return volume;
  }

  /** Returns a description naming the file. */
  @Override
  public String toString() {
    return "MapDbCheckpointStore[" + file + "]";
  }
}
