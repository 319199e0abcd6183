package example;

import org.ndgather.Graph;
import org.ndgather.Session;
import org.ndgather.Tensor;
import org.ndgather.Tensors;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gather;
import org.ndgather.op.core.Placeholder;

/**
 * A TF Java 1.15 program, its imports saying org.ndgather: an embedding table fed at run time,
 * two users' rows gathered from it, and the gathered rows' columns picked along axis 1.
 */
public final class Recommend {
  private Recommend() {}

  public static void main(String[] args) {
    try (Graph g = new Graph(); Session s = new Session(g)) {
      Ops tf = Ops.create(g);
      Placeholder<Float> table = tf.placeholder(Float.class);
      Gather<Float> users = tf.gather(table, tf.constant(new int[] {2, 0}), tf.constant(0));
      Gather<Float> firstColumn = tf.gather(users, tf.constant(new int[] {0}), tf.constant(1));
      float[][] rows = {{0.5f, 1.5f}, {2.5f, 3.5f}, {4.5f, 5.5f}};
      try (Tensor<Float> t = Tensors.create(rows);
          Tensor<?> out = s.runner().feed(table, t).fetch(firstColumn).run().get(0)) {
        float[][] picked = out.expect(Float.class).copyTo(new float[2][1]);
        System.out.println("first column of users 2 and 0: " + picked[0][0] + " " + picked[1][0]);
      }
    }
  }
}
