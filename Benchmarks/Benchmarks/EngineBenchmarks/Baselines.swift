import Benchmark
import Observation
import OpenCombine

// The anchors that LiveBind's `set + observer` is compared with, in the same run.

/// The floor: a stored value and one stored closure, called on every set. Nothing can notify for less.
final class ClosureBox {
    private(set) var value = 0
    private let onChange: (Int) -> Void

    init(onChange: @escaping (Int) -> Void) { self.onChange = onChange }

    func set(_ newValue: Int) {
        value = newValue
        onChange(newValue)
    }
}

/// A model property tracked by Swift's Observation framework.
@Observable final class ObservedBox {
    var value = 0
}

func registerBaselineBenchmarks() {
    Benchmark("set/closure-floor", configuration: scalarConfiguration) { benchmark in
        let box = ClosureBox { blackHole($0) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            box.set(i)
        }
        benchmark.stopMeasurement()
        blackHole(box.value)
    }

    Benchmark("set/opencombine-sink", configuration: scalarConfiguration) { benchmark in
        let subject = CurrentValueSubject<Int, Never>(0)
        let subscription = subject.sink { blackHole($0) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            subject.send(i)
        }
        benchmark.stopMeasurement()
        subscription.cancel()
    }

    // Observation delivers one `onChange` per registration: a live observer has to register again
    // after every change, which is what this measures (register, set, callback).
    Benchmark("set/observation-tracking", configuration: scalarConfiguration) { benchmark in
        let box = ObservedBox()
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            withObservationTracking {
                blackHole(box.value)
            } onChange: {
                blackHole(1)
            }
            box.value = i
        }
        benchmark.stopMeasurement()
    }

    // The binding hop's anchor: source subject → map (the transform) → target subject → observer.
    Benchmark("binding/opencombine-map-hop", configuration: scalarConfiguration) { benchmark in
        let source = CurrentValueSubject<Int, Never>(0)
        let target = CurrentValueSubject<Int, Never>(0)
        let link = source.map { $0 * 2 }.sink { target.send($0) }
        let observer = target.sink { blackHole($0) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            source.send(i)
        }
        benchmark.stopMeasurement()
        link.cancel()
        observer.cancel()
    }
}
