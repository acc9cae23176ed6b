"""Prints a function whose multi-tensor update group has `chains` chains of
two stages (an SGD step and the EMA of its result), for
emit-cuda-multi-tensor.test."""
import sys

chains = int(sys.argv[1])
args = ", ".join(f"%w{k}: tensor<4xf32>, %g{k}: tensor<4xf32>, %e{k}: tensor<4xf32>"
                 for k in range(chains))
types = ", ".join(["tensor<4xf32>"] * (2 * chains))
print(f"func.func @many({args}, %lr: tensor<f32>, %step: tensor<i64>) {{")
print(f"  %0:{2 * chains} = tcc.fusion_group \"multi_tensor_update\" -> ({types}) {{")
for k in range(chains):
    print(f"    %n{k} = tcc.sgd_update %w{k}, %g{k}, %lr, %step {{dampening = 0.0 : f64, "
          "lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}"
          " : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>")
    print(f"    %m{k} = tcc.ema_update %e{k}, %n{k}, %step {{decay = 0.5 : f64, every = 1 : i64}}"
          " : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>")
results = ", ".join(f"%n{k}, %m{k}" for k in range(chains))
print(f"    tcc.yield {results} : {types}")
print("  }")
print("  return")
print("}")
