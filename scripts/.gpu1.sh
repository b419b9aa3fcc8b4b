set -u
export GPUDF_COMMIT=$(cat .gpu-bundle/COMMIT)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/device.txt
JAVA_OPTS="-Xmx24g --sun-misc-unsafe-memory-access=allow -Dgpudf.debug.allocations=true" timeout 150 bash .gpu-bundle/run org.junit.platform.console.ConsoleLauncher execute --scan-classpath --include-tag gpu --disable-banner --details=none --include-classname '.*\.(TpchTest|CatalogTest)' --reports-dir $OUT/rep > $OUT/tests.txt 2>&1
echo "tests rc=$?" >> $OUT/tests.txt
python3 scripts/junit-summary.py $OUT/rep >> $OUT/tests.txt 2>&1
tail -8 $OUT/tests.txt
