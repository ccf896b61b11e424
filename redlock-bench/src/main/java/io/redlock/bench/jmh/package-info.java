/**
 * JMH benchmarks of the hot paths that need no network, for bytes allocated per operation:
 * the arguments the Lettuce transport encodes per call
 * ({@link io.redlock.bench.jmh.ScriptArgsBench}) and a whole acquire+release over in-memory
 * nodes ({@link io.redlock.bench.jmh.FullCycleBench}), which includes the token, both rounds'
 * quorum bookkeeping and their deadlines. The core is measured through its public API: its
 * {@code io.redlock.internal} is the core's alone, and its pieces are measured where they add
 * up, in a whole cycle. The transport's codec and script arguments, internal to the Lettuce
 * module, are reached by reflection: they are what goes on the wire.
 *
 * <p>Run them all, from the repository root:
 *
 * <pre>
 * ./mvnw -B -q -pl redlock-bench -am package -DskipTests
 * java -jar redlock-bench/target/benchmarks.jar -prof gc
 * java -jar redlock-bench/target/benchmarks.jar -prof gc -rf json -rff redlock-bench/target/jmh.json
 * </pre>
 *
 * <p>{@code ./bench} runs them with {@code -prof gc} and quotes {@code gc.alloc.rate.norm}
 * (bytes per operation) in docs/performance.md.
 */
package io.redlock.bench.jmh;
