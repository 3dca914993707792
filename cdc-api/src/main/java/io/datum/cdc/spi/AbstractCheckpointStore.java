package io.datum.cdc.spi;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.SlotNames;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The base of a checkpoint store that keeps bytes per slot: it owns everything but the storage.
 *
 * <ul>
 *   <li><b>Lifecycle.</b> {@link #load}, {@link #store} and {@link #slots} throw {@link
 *       IllegalStateException} once {@link #close} began; {@code close} waits for the calls in
 *       flight, then calls {@link #release()} once and releases the {@link StoreLock}. Idempotent.
 *   <li><b>Group commit.</b> Concurrent {@code store} calls share one {@link #write} of every
 *       slot's newest checkpoint ({@link GroupCommit}).
 *   <li><b>Exclusivity.</b> The {@link StoreLock} the subclass took before opening its files is
 *       held until close.
 *   <li><b>Format.</b> Checkpoints are encoded with {@link CheckpointCodec}; a value that does not
 *       decode is a {@link CdcStoreException} naming {@link #where(String)} and the slot.
 *   <li><b>Errors.</b> Exceptions of the storage methods reach the caller as {@link
 *       CdcStoreException}s naming the store and the slot, with the original as cause.
 * </ul>
 *
 * <p>A subclass implements {@link #read}, {@link #write}, {@link #list} and {@link #release}; its
 * static {@code open} takes the lock, opens its files, and calls the constructor. Each storage
 * method is called with the store open; {@link #write} is called by one thread at a time, {@link
 * #read} and {@link #list} concurrently with it and with each other.
 */
public abstract class AbstractCheckpointStore implements CdcCheckpointStore {

  private final String name;
  private final StoreLock lock;
  private final GroupCommit groupCommit;

  /** Calls hold the read lock, close the write lock: close waits for the calls in flight. */
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

  private boolean closed; // guarded by lifecycle

  /**
   * Creates the base of an open store; the subclass's storage must be open when it calls this.
   *
   * @param name the store for messages, such as {@code "file checkpoint store /var/lib/cdc"}; it
   *     should name the path or URI, since errors must
   * @param lock the lock this store holds until close, or null if the storage locks itself
   * @throws NullPointerException if {@code name} is null
   */
  protected AbstractCheckpointStore(String name, StoreLock lock) {
    this.name = Objects.requireNonNull(name, "name");
    this.lock = lock;
    this.groupCommit = new GroupCommit(name, this::writeBatch);
  }

  /**
   * Reads the bytes stored for a slot.
   *
   * @param slot a valid slot name
   * @return the bytes last {@linkplain #write written} for the slot, or null if none
   * @throws Exception if they cannot be read; reported as a {@link CdcStoreException}
   */
  protected abstract byte[] read(String slot) throws Exception;

  /**
   * Writes a batch durably: when this returns, each value survives what the store promises (a
   * process crash, a power loss); if it throws, each slot holds its previous or its new value.
   *
   * @param batch slot name to encoded checkpoint, at least one entry, in submission order
   * @throws Exception if the batch could not be made durable; every caller of the batch gets a
   *     {@link CdcStoreException}
   */
  protected abstract void write(Map<String, byte[]> batch) throws Exception;

  /**
   * Lists the slots with stored bytes.
   *
   * @return the slot names, in any order; valid names only
   * @throws Exception if the storage cannot be listed
   */
  protected abstract Collection<String> list() throws Exception;

  /**
   * Releases the storage (closes files, databases, native memory); called once by {@link #close},
   * after every call in flight returned, before the lock is released.
   *
   * @throws Exception if releasing failed; {@code close} reports it as a {@link CdcStoreException}
   *     and releases the lock anyway
   */
  protected abstract void release() throws Exception;

  /**
   * Returns where a slot's value lives, for error messages; the default is the store's name.
   *
   * @param slot a valid slot name
   * @return a file path or location, not null
   */
  protected String where(String slot) {
    return name;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public final Optional<CdcCheckpoint> load(String slot) {
    SlotNames.requireValid(slot);
    byte[] value;
    ReentrantReadWriteLock.ReadLock open = enter();
    try {
      value = read(slot);
    } catch (Exception e) {
      throw failure("cannot read the checkpoint of slot \"" + slot + "\" from " + where(slot), e);
    } finally {
      open.unlock();
    }
    return value == null
        ? Optional.empty()
        : Optional.of(CheckpointCodec.decode(value, slot, where(slot)));
  }

  /**
   * {@inheritDoc} Concurrent calls share one write (see {@link GroupCommit}).
   *
   * @throws NullPointerException if {@code checkpoint} is null
   */
  @Override
  public final void store(CdcCheckpoint checkpoint) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    ReentrantReadWriteLock.ReadLock open = enter();
    try {
      groupCommit.store(checkpoint);
    } finally {
      open.unlock();
    }
  }

  /**
   * {@inheritDoc}
   *
   * @return the slot names, sorted, an unmodifiable copy
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public final SortedSet<String> slots() {
    ReentrantReadWriteLock.ReadLock open = enter();
    try {
      return Collections.unmodifiableSortedSet(new TreeSet<>(list()));
    } catch (Exception e) {
      throw failure("cannot list the slots of " + name, e);
    } finally {
      open.unlock();
    }
  }

  /**
   * Waits for the calls in flight, then releases the storage and the lock. Idempotent; afterwards
   * every other method but {@link #location()} throws {@link IllegalStateException}, and another
   * store may open the same storage.
   *
   * @throws CdcStoreException naming the store if releasing the storage or the lock failed; the
   *     store is closed anyway
   */
  @Override
  public final void close() {
    ReentrantReadWriteLock.WriteLock exclusive = lifecycle.writeLock();
    exclusive.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      CdcStoreException failure = null;
      try {
        release();
      } catch (Exception e) {
        failure = failure("cannot close " + name, e);
      }
      if (lock != null) {
        try {
          lock.release();
        } catch (Exception e) {
          CdcStoreException unlock = failure("cannot release the lock of " + name, e);
          if (failure == null) {
            failure = unlock;
          } else {
            failure.addSuppressed(unlock);
          }
        }
      }
      if (failure != null) {
        throw failure;
      }
    } finally {
      exclusive.unlock();
    }
  }

  /** Returns the store's name for messages. */
  @Override
  public String toString() {
    return name;
  }

  private ReentrantReadWriteLock.ReadLock enter() {
    ReentrantReadWriteLock.ReadLock open = lifecycle.readLock();
    open.lock();
    if (closed) {
      open.unlock();
      throw new IllegalStateException(name + " is closed");
    }
    return open;
  }

  private void writeBatch(Collection<CdcCheckpoint> batch) throws Exception {
    Map<String, byte[]> values = new LinkedHashMap<>();
    for (CdcCheckpoint checkpoint : batch) {
      values.put(checkpoint.slot(), CheckpointCodec.encode(checkpoint));
    }
    write(values);
  }

  private static CdcStoreException failure(String what, Exception e) {
    if (e instanceof CdcStoreException store) {
      return store;
    }
    return new CdcStoreException(what + ": " + e, e);
  }
}
