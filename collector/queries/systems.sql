-- systems: every system described, with its accelerators and interconnect.
SELECT
    source, round, submitter, system, division, availability, accelerator,
    accelerators_per_node, nodes, accelerators, accelerator_memory_gib, interconnect,
    interconnect_inferred, accelerator_interconnect, node_interconnect, cpu, cpu_sockets,
    cpu_cores, host_memory_gib, framework, os, software, system_id, description_path
FROM store.systems
ORDER BY source, round, submitter, system
