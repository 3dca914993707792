package io.datum.cdc.benchmarks;

import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * Reports {@code ack.alloc.norm}: bytes allocated per operation inside the measured part of the
 * invocations only, without the per-invocation setup that {@code gc.alloc.rate.norm} includes (see
 * {@link AckAllocation}). Enable with {@code -prof io.datum.cdc.benchmarks.AckAllocationProfiler};
 * benchmarks that do not open {@link AckAllocation.Window}s report nothing.
 */
public final class AckAllocationProfiler implements InternalProfiler {

  @Override
  public String getDescription() {
    return "bytes allocated per operation by the measured code only, without invocation setup";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    AckAllocation.BYTES.reset();
    AckAllocation.OPERATIONS.reset();
  }

  @Override
  public Collection<? extends Result<?>> afterIteration(
      BenchmarkParams benchmarkParams, IterationParams iterationParams, IterationResult result) {
    long operations = AckAllocation.OPERATIONS.sum();
    if (operations == 0) {
      return List.of();
    }
    double perOperation = (double) AckAllocation.BYTES.sum() / operations;
    return List.of(new ScalarResult("ack.alloc.norm", perOperation, "B/op", AggregationPolicy.AVG));
  }
}
