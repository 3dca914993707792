package io.datum.cdc.core.delivery;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Several handler threads behind one hand-off: a dispatcher thread takes the events from the {@link
 * Handoff} in stream order and puts each into the FIFO {@link Lane} of the thread its ordering unit
 * maps to ({@link OrderingRouter}); each lane's thread calls the handler with its events in that
 * order. Events of one unit are therefore handled in stream order, one at a time; different units
 * in parallel.
 *
 * <p><b>Events of several lanes.</b> An event routed to more than one lane (an update that changes
 * the key: the old key's lane and the new one's; a {@code TRUNCATE}, a logical decoding message,
 * and a change whose key cannot be told: every lane) becomes a {@link Gate} put into each of those
 * lanes. The gate's first lane handles the event once every other lane of the gate has reached it
 * (finished everything put before it) and ended its batch ({@link CdcHandler#batchEnd}); those
 * lanes wait until it was handled, and its lane ends the batch right after it. Gates are put into
 * every lane in the same order, so the earliest gate not handled yet can always be handled: the
 * threads never wait for each other in a cycle.
 *
 * <p><b>Memory and convoys.</b> At most {@code inFlight} events (the hand-off's capacity) are taken
 * from the hand-off and not yet handled, so the decoded events held in memory are at most twice the
 * hand-off's capacity, whatever the number of threads. A lane holds at most {@code laneCapacity}
 * events: a slow unit delays the other units only once its lane is full (or every in-flight event
 * waits in it), and then by the slow handler's time per event the dispatcher waits for room. The
 * queue depths and the oldest waiting event's age are {@link #queueDepths} and {@link
 * #oldestWaitingNanos}.
 *
 * <p><b>Acknowledgement.</b> Each thread acknowledges through the source's handle as one thread
 * does; {@link CdcCheckpointHandle#acknowledgeTransaction} from a lane acknowledges the events of
 * that transaction (or chunk) that were handed to that lane, up to the one being handled: under
 * {@link HandlerOrdering#TRANSACTION}, called at the transaction's last event, that is the whole
 * transaction (its {@code TRUNCATE}s and messages are handled on its lane too); under the other
 * orderings the other lanes' events of it are acknowledged by their own threads. Unlike with one
 * thread, events not handed out yet are never acknowledged by it.
 *
 * <p><b>Failure and stop.</b> A handler failure fails the source: every thread finishes the event
 * it is handling and takes no more; the events waiting in the lanes are not handled, and, never
 * acknowledged, are delivered again after a restart. A stop does the same, each thread ending its
 * batch first.
 */
public final class ParallelDelivery implements Delivery {

  /** How long one wait looks before the stop conditions are looked at again. */
  private static final long POLL_MILLIS = 20;

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ParallelDelivery.class);

  /** Whether the warning about acknowledgeTransaction's meaning with several threads was logged. */
  private static final java.util.concurrent.atomic.AtomicBoolean WARNED =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** The most events the dispatcher takes from the hand-off at once. */
  private static final int BATCH = 256;

  /** Entries a lane's handed list holds before it drops those already acknowledged. */
  private static final int PRUNE_EVERY = 4096;

  private final Handoff handoff;
  private final CdcHandler handler;
  private final CdcCheckpointHandle handle;
  private final Consumer<List<CdcOffset>> acknowledgeAll;
  private final Predicate<CdcOffset> acknowledged;
  private final BooleanSupplier stopping;
  private final BooleanSupplier producerDone;
  private final Consumer<Throwable> onFailure;
  private final Runnable onExit;
  private final String name;
  private final OrderingRouter router;
  private final HandlerOrdering ordering;
  private final Lane[] lanes;
  private final Worker[] workers;
  private final Semaphore inFlight;
  private final AtomicInteger running = new AtomicInteger();
  private volatile boolean dispatcherDone;
  private volatile Thread dispatcherThread;

  /**
   * @param handoff where the events come from, in stream order
   * @param handler the application's handler (called from every lane's thread)
   * @param handle the source's checkpoint handle
   * @param acknowledgeAll acknowledges several offsets with at most one store write
   * @param acknowledged true for an offset whose acknowledgement is stored (its transaction at or
   *     before the watermark, its chunk settled): a lane forgets it
   * @param threads the handler threads, at least 2
   * @param ordering the ordering unit
   * @param inFlight the events taken from the hand-off and not handled yet, at most; at least 1
   * @param stopping true once the source stops: the threads end after their current event
   * @param producerDone true once the replication thread ended for good: the threads end when the
   *     hand-off and their lanes are empty
   * @param onFailure told about a handler failure (fails the source)
   * @param onExit run once, when the last thread ended
   * @param name the threads' name prefix
   */
  public ParallelDelivery(
      Handoff handoff,
      CdcHandler handler,
      CdcCheckpointHandle handle,
      Consumer<List<CdcOffset>> acknowledgeAll,
      Predicate<CdcOffset> acknowledged,
      int threads,
      HandlerOrdering ordering,
      int inFlight,
      BooleanSupplier stopping,
      BooleanSupplier producerDone,
      Consumer<Throwable> onFailure,
      Runnable onExit,
      String name) {
    if (threads < 2) {
      throw new IllegalArgumentException("threads must be at least 2, was " + threads);
    }
    this.handoff = handoff;
    this.handler = handler;
    this.handle = handle;
    this.acknowledgeAll = acknowledgeAll;
    this.acknowledged = acknowledged;
    this.stopping = stopping;
    this.producerDone = producerDone;
    this.onFailure = onFailure;
    this.onExit = onExit;
    this.name = name;
    this.ordering = ordering;
    this.router = new OrderingRouter(ordering, threads);
    this.inFlight = new Semaphore(Math.max(1, inFlight));
    int laneCapacity = Math.max(1, inFlight);
    this.lanes = new Lane[threads];
    this.workers = new Worker[threads];
    for (int i = 0; i < threads; i++) {
      lanes[i] = new Lane(laneCapacity);
      workers[i] = new Worker(i);
    }
  }

  @Override
  public void start() {
    running.set(workers.length + 1);
    Thread d = new Thread(this::dispatch, name + "-dispatcher");
    dispatcherThread = d;
    for (Worker w : workers) {
      Thread t = new Thread(w, name + '-' + w.index);
      w.thread = t;
      t.start();
    }
    d.start();
  }

  @Override
  public long eventsHandled() {
    long sum = 0;
    for (Worker w : workers) {
      sum += w.eventsHandled;
    }
    return sum;
  }

  @Override
  public long lastHandledNanos() {
    long last = 0;
    for (Worker w : workers) {
      long n = w.lastHandledNanos;
      if (n != 0 && (last == 0 || n - last > 0)) {
        last = n;
      }
    }
    return last;
  }

  @Override
  public boolean isHandlerThread(Thread thread) {
    for (Worker w : workers) {
      if (w.thread == thread) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void clear() {
    handoff.clear();
    for (Lane lane : lanes) {
      int dropped = lane.dropEvents();
      if (dropped > 0) {
        inFlight.release(dropped);
      }
    }
  }

  @Override
  public int[] queueDepths() {
    int[] depths = new int[lanes.length];
    for (int i = 0; i < lanes.length; i++) {
      depths[i] = lanes[i].size();
    }
    return depths;
  }

  @Override
  public long oldestWaitingNanos() {
    long oldest = 0;
    for (Lane lane : lanes) {
      long n = lane.oldestNanos();
      if (n != 0 && (oldest == 0 || n - oldest < 0)) {
        oldest = n;
      }
    }
    return oldest;
  }

  // ---- the dispatcher ----------------------------------------------------------------------

  private void dispatch() {
    int[] route = new int[lanes.length];
    boolean[] touched = new boolean[lanes.length];
    List<ChangeEvent> batch = new ArrayList<>(BATCH);
    try {
      while (!stopping.getAsBoolean()) {
        ChangeEvent first = handoff.poll(POLL_MILLIS);
        if (first == null) {
          if (producerDone.getAsBoolean()) {
            break;
          }
          continue;
        }
        // a batch of what waits: each lane's thread is woken once per batch, not per event
        batch.add(first);
        handoff.drainTo(batch, BATCH - 1);
        long now = System.nanoTime();
        for (ChangeEvent event : batch) {
          int n = router.route(event, route);
          if (!acquire(touched)) {
            return;
          }
          if (n == 0) {
            put(leastLoaded(), event, now, touched);
          } else if (n == 1) {
            put(route[0], event, now, touched);
          } else {
            Gate gate = new Gate(event, route[0], n - 1);
            for (int k = 0; k < n; k++) {
              put(route[k], gate, now, touched);
            }
          }
        }
        batch.clear();
        signal(touched);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Stopped e) {
      // the source stops: the lanes' threads end without taking more
    } finally {
      signal(touched);
      dispatcherDone = true;
      exited();
    }
  }

  /** Wakes the threads of the lanes that got items since the last call. */
  private void signal(boolean[] touched) {
    for (int i = 0; i < touched.length; i++) {
      if (touched[i]) {
        touched[i] = false;
        lanes[i].signal();
      }
    }
  }

  /** Takes a permit for one more event in flight, waking the lanes first if it must wait. */
  private boolean acquire(boolean[] touched) throws InterruptedException {
    if (inFlight.tryAcquire()) {
      return true;
    }
    signal(touched);
    while (!inFlight.tryAcquire(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
      if (stopping.getAsBoolean()) {
        return false;
      }
    }
    return true;
  }

  private void put(int lane, Object item, long now, boolean[] touched) throws InterruptedException {
    touched[lane] = true;
    if (lanes[lane].add(item, now)) {
      return;
    }
    signal(touched); // the lane is full: its thread must run to make room
    while (!lanes[lane].offer(item, now, POLL_MILLIS)) {
      if (stopping.getAsBoolean()) {
        throw new Stopped();
      }
    }
  }

  /** The lane with the fewest events waiting or being handled ({@link HandlerOrdering#NONE}). */
  private int leastLoaded() {
    int best = 0;
    int bestLoad = Integer.MAX_VALUE;
    for (int i = 0; i < lanes.length; i++) {
      int load = lanes[i].size() + (workers[i].busy ? 1 : 0);
      if (load < bestLoad) {
        best = i;
        bestLoad = load;
        if (load == 0) {
          break;
        }
      }
    }
    return best;
  }

  private void exited() {
    if (running.decrementAndGet() == 0) {
      onExit.run();
    }
  }

  /** Thrown inside the dispatcher when the source stops while it waits for room. */
  private static final class Stopped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stopped() {
      super(null, null, false, false);
    }
  }

  /**
   * An event handled alone on one lane (its executor) after every other lane of the gate reached
   * it, while those lanes wait.
   */
  static final class Gate {
    final ChangeEvent event;
    final int executor;
    private int arrivalsLeft;
    private boolean done;

    Gate(ChangeEvent event, int executor, int others) {
      this.event = event;
      this.executor = executor;
      this.arrivalsLeft = others;
    }

    synchronized void arrive() {
      arrivalsLeft--;
      notifyAll();
    }

    /** Waits until every other lane arrived; false if the source stops meanwhile. */
    synchronized boolean awaitArrivals(BooleanSupplier stopping) throws InterruptedException {
      while (arrivalsLeft > 0) {
        if (stopping.getAsBoolean()) {
          return false;
        }
        wait(POLL_MILLIS);
      }
      return true;
    }

    synchronized void handled() {
      done = true;
      notifyAll();
    }

    /** Waits until the executor handled the event; false if the source stops meanwhile. */
    synchronized boolean awaitHandled(BooleanSupplier stopping) throws InterruptedException {
      while (!done) {
        if (stopping.getAsBoolean()) {
          return false;
        }
        wait(POLL_MILLIS);
      }
      return true;
    }
  }

  // ---- the lanes' threads ------------------------------------------------------------------

  /** One lane's thread, and the handle its handler is given. */
  private final class Worker implements Runnable, CdcCheckpointHandle {
    final int index;
    volatile Thread thread;
    volatile boolean busy;
    volatile long eventsHandled;
    volatile long lastHandledNanos;

    /** The offsets handed to this lane and maybe not acknowledged yet (acknowledgeTransaction). */
    private final List<CdcOffset> handed = new ArrayList<>();

    private int sincePrune;

    Worker(int index) {
      this.index = index;
    }

    @Override
    public void run() {
      Lane lane = lanes[index];
      ChangeEvent event = null;
      boolean batchOpen = false;
      try {
        while (!stopping.getAsBoolean()) {
          Object item = lane.poll(0);
          if (item == null) {
            if (batchOpen) {
              batchOpen = false;
              handler.batchEnd(this);
              continue;
            }
            item = lane.poll(POLL_MILLIS);
            if (item == null) {
              if (dispatcherDone && lane.size() == 0) {
                break;
              }
              continue;
            }
          }
          if (stopping.getAsBoolean()) {
            break;
          }
          if (item instanceof Gate gate) {
            if (batchOpen) {
              batchOpen = false;
              handler.batchEnd(this);
            }
            if (gate.executor != index) {
              gate.arrive();
              if (!gate.awaitHandled(stopping)) {
                break;
              }
              continue;
            }
            if (!gate.awaitArrivals(stopping)) {
              break;
            }
            event = gate.event;
            handle(event);
            event = null; // a failure of batchEnd is not this event's
            handler.batchEnd(this);
            gate.handled();
          } else {
            event = (ChangeEvent) item;
            handle(event);
            batchOpen = true;
          }
          event = null;
          inFlight.release();
        }
        if (batchOpen) {
          handler.batchEnd(this);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Throwable t) {
        onFailure.accept(HandlerThread.failure(event, " on handler thread " + index, t));
      } finally {
        busy = false;
        exited();
      }
    }

    private void handle(ChangeEvent event) throws Exception {
      busy = true;
      record(event.offset());
      handler.handle(event, this);
      busy = false;
      if (HandlerThread.isStreamChange(event)) {
        eventsHandled++; // one writer: this thread
      }
      if (HandlerThread.stampsAfter(event)) {
        lastHandledNanos = System.nanoTime();
      }
    }

    private void record(CdcOffset offset) {
      synchronized (handed) {
        handed.add(offset);
        if (++sincePrune >= PRUNE_EVERY) {
          sincePrune = 0;
          handed.removeIf(acknowledged);
        }
      }
    }

    @Override
    public void acknowledge(CdcOffset offset) {
      handle.acknowledge(offset);
    }

    @Override
    public CompletableFuture<Void> acknowledgeAsync(CdcOffset offset) {
      return handle.acknowledgeAsync(offset);
    }

    @Override
    public PgLsn watermark() {
      return handle.watermark();
    }

    /**
     * Acknowledges the events of {@code offset}'s transaction (or chunk) handed to this lane so
     * far; under {@link HandlerOrdering#TRANSACTION} the whole transaction, as with one thread.
     */
    @Override
    public void acknowledgeTransaction(CdcOffset offset) {
      if (ordering != HandlerOrdering.TRANSACTION && WARNED.compareAndSet(false, true)) {
        LOG.warn(
            "acknowledgeTransaction with {} handler threads and {} ordering acknowledges only the"
                + " events of the transaction handed to the calling thread; a handler that calls it"
                + " only at the transaction's last event leaves the other threads' events"
                + " unacknowledged and the slot stalls. Acknowledge each event, or each thread's"
                + " share (at batchEnd), or use HandlerOrdering.TRANSACTION (docs/library.md,"
                + " \"Parallel handlers\"). Logged once.",
            workers.length,
            ordering);
      }
      long unit = OrderingRouter.unitOf(offset);
      boolean read = offset.isSnapshotRead();
      List<CdcOffset> mine = new ArrayList<>();
      synchronized (handed) {
        handed.removeIf(
            o -> {
              if (o.isSnapshotRead() == read && OrderingRouter.unitOf(o) == unit) {
                mine.add(o);
                return true;
              }
              return false;
            });
      }
      if (mine.isEmpty()) {
        mine.add(offset); // validated and acknowledged as one event
      }
      acknowledgeAll.accept(mine);
    }
  }
}
