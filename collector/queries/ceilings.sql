-- ceilings: the dense matmul ceiling the runner measured on each local system, TFLOP/s of one
-- accelerator per precision (fp32 with TF32 off), from the ceilings files shipped beside the
-- local runs' system descriptions (registered as measured_ceilings).
SELECT s.system_id, c.precision, c.matmul_tflops, c.measured_at, c.description_path
FROM measured_ceilings AS c
JOIN (SELECT DISTINCT system_id, description_path FROM store.systems) AS s
    USING (description_path)
ORDER BY s.system_id, c.precision
