package dev.gpudf.sql;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.metadata.CyclicMetadataException;
import org.apache.calcite.rel.metadata.DefaultRelMetadataProvider;
import org.apache.calcite.rel.metadata.DelegatingMetadataRel;
import org.apache.calcite.rel.metadata.MetadataHandler;
import org.apache.calcite.rel.metadata.MetadataHandlerProvider;
import org.apache.calcite.rel.metadata.NullSentinel;
import org.apache.calcite.rel.metadata.ProxyingMetadataHandlerProvider;
import org.apache.calcite.rel.metadata.RelMetadataQuery;
import org.apache.calcite.rex.RexNode;

/**
 * Calcite's built-in metadata (row counts, predicates, collations, uniqueness ...) answered by
 * its reflective handlers, with each answer kept in the query's {@link RelMetadataQuery} as
 * Calcite's default provider keeps it. The default provider generates and compiles a Java class a
 * kind of metadata, with Janino, the first time a process asks for it: 115 ms of a 380 ms
 * first plan of TPC-H q6 on 2 cores (the compiler's own classes loaded and run cold), which
 * every {@code gpudf sql "<statement>"} paid. Calcite's proxying provider dispatches the same
 * handlers without generated code but keeps no answers, so a plan's metadata would be computed
 * again on every ask; this adds the cache (the same keys and the same check for cycles as the
 * generated code), and looks through {@link DelegatingMetadataRel}s (a Hep planner's vertices) to
 * the relation they stand for, as the generated code does.
 */
final class MetadataHandlers implements MetadataHandlerProvider {
  /** Over Calcite's default handlers. */
  static final MetadataHandlers DEFAULT = new MetadataHandlers();

  private final ProxyingMetadataHandlerProvider proxies =
      new ProxyingMetadataHandlerProvider(DefaultRelMetadataProvider.INSTANCE);
  private final Map<Class<?>, MetadataHandler<?>> handlers = new ConcurrentHashMap<>();

  private MetadataHandlers() {}

  /** A new metadata query over these handlers (what a cluster's metadata supplier returns). */
  static RelMetadataQuery query() {
    return new RelMetadataQuery(DEFAULT);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <MH extends MetadataHandler<?>> MH handler(Class<MH> handlerClass) {
    return (MH) handlers.computeIfAbsent(handlerClass, c -> cached(handlerClass, proxies.handler(handlerClass)));
  }

  @SuppressWarnings("unchecked")
  private static <MH extends MetadataHandler<?>> MH cached(Class<MH> handlerClass, MH inner) {
    return (MH) Proxy.newProxyInstance(handlerClass.getClassLoader(), new Class<?>[] {handlerClass},
        (proxy, method, args) -> {
          if (method.getDeclaringClass() == Object.class) {
            return switch (method.getName()) {
              case "equals" -> proxy == args[0];
              case "hashCode" -> System.identityHashCode(proxy);
              default -> handlerClass.getSimpleName() + " (cached)";
            };
          }
          RelNode rel = (RelNode) args[0];
          while (rel instanceof DelegatingMetadataRel d) {
            rel = d.getMetadataDelegateRel();
          }
          args[0] = rel;
          RelMetadataQuery mq = (RelMetadataQuery) args[1];
          Object key = key(method, args);
          Object known = mq.map.get(rel, key);
          if (known == NullSentinel.ACTIVE) {
            throw new CyclicMetadataException();
          }
          if (known != null) {
            return known == NullSentinel.INSTANCE ? null : known;
          }
          mq.map.put(rel, key, NullSentinel.ACTIVE);
          try {
            Object answer = method.invoke(inner, args);
            mq.map.put(rel, key, NullSentinel.mask(answer));
            return answer;
          } catch (InvocationTargetException e) {
            mq.map.row(rel).clear();
            throw e.getCause();
          } catch (RuntimeException | Error e) {
            mq.map.row(rel).clear();
            throw e;
          }
        });
  }

  /** The method and its arguments after the relation and the query; NULLs masked, as the generated code keys them. */
  private static Object key(Method method, Object[] args) {
    if (args.length == 2) {
      return method;
    }
    Object[] key = new Object[args.length - 1];
    key[0] = method;
    for (int i = 2; i < args.length; i++) {
      key[i - 1] = args[i] instanceof RexNode ? args[i] : NullSentinel.mask(args[i]);
    }
    return java.util.Arrays.asList(key);
  }
}
