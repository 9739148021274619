# Source: github.com/Hiroaki-Masuzawa/llm_vlm_memo @ 35a17fde8c6254c633901273e3632c78ffe9fa51 : run_qwen2.5-3b_cpu.sh
# Kind: docker run of a locally built vLLM CPU image (image not named vllm/*)
CACHEDIR=${PWD}/vllm_root_cache
MODEL=Qwen/Qwen2.5-VL-3B-Instruct

docker run --rm --network=host \
    -v ${CACHEDIR}:/root/.cache \
    --ipc=host \
    -v ${PWD}/vllm:/vllm \
    vllm-cpu-env \
    --model ${MODEL} --max_model_len 116480

